import { describe, expect, it } from "vitest";
import { askAgainRule, faultedAfterBudget, nudgesOf, wokeWhenPickOpened } from "../../src/index.js";
import {
  body,
  calls,
  coderRequests,
  edit,
  NUDGE,
  nudge,
  restatement,
  result,
  stopped,
  system,
  task,
} from "../fixtures/conversation.js";

const reason = (v: { ok: boolean; reason?: string }) => (v.ok ? "" : (v as { reason: string }).reason);
const NONE = "none. Every pick is refused until the workflow opens one.";

/** C5: a reviewer that stops twice, is nudged twice (the budget), and faults. */
const exhausted = () => [
  body([system(), task("Review the change.", "approve, request_changes."), stopped()]),
  body([
    system(),
    task("Review the change.", "approve, request_changes."),
    stopped(),
    nudge("approve, request_changes."),
    stopped(),
    nudge("approve, request_changes."),
  ]),
];

describe("ask-again (§10.6)", () => {
  it("accepts a nudge with picks left after a model that stopped", () => {
    expect(askAgainRule(coderRequests())).toEqual({ ok: true });
    expect(nudgesOf(coderRequests()).map((n) => n.allowed)).toEqual([["dispute", "finish"]]);
  });

  it("accepts budget exhaustion ending in agent.fault no-signal", () => {
    const feed = [{ type: "fault", child: "review#reviewer", reason: "no-signal" }];
    expect(faultedAfterBudget(exhausted(), feed)).toEqual({ ok: true });
  });

  it("rejects a fault the feed never carried, and a fault after fewer nudges than the budget", () => {
    expect(reason(faultedAfterBudget(exhausted(), [{ type: "status", status: "running" }]))).toMatch(
      /no fault with reason "no-signal"/,
    );
    const once = [body([system(), task("Review.", "approve."), stopped(), nudge("approve.")])];
    expect(reason(faultedAfterBudget(once, [{ type: "fault", reason: "no-signal" }]))).toMatch(
      /nudged 1 time\(s\)/,
    );
  });

  it("rejects a third nudge in one Turn when the budget is 2", () => {
    const raw = body([
      system(),
      task("Review.", "approve."),
      stopped(),
      nudge("approve."),
      stopped(),
      nudge("approve."),
      stopped(),
      nudge("approve."),
    ]);
    expect(reason(askAgainRule([raw]))).toMatch(/message 7 is nudge 3 of one Turn; the budget is 2/);
  });

  it("rejects a nudge that states an empty list", () => {
    const raw = body([system(), task("Triage.", NONE), stopped(), nudge(NONE)]);
    expect(reason(askAgainRule([raw]))).toMatch(/message 3 \(nudge\) states "Allowed now: none\."/);
  });

  it("rejects a nudge whose sentence is not exact", () => {
    const raw = edit(
      body([system(), task("Review.", "approve."), stopped(), nudge("approve.")]),
      NUDGE,
      "Please pick a tool.",
    );
    // Without the exact sentence the message reads as a new task; the rule then sees no nudge at all.
    expect(nudgesOf([raw])).toEqual([]);
    const close = edit(
      body([system(), task("Review.", "approve."), stopped(), nudge("approve.")]),
      `${NUDGE}\\n\\n`,
      `${NUDGE} Pick now.\\n\\n`,
    );
    expect(reason(askAgainRule([close]))).toMatch(/does not open with exactly/);
  });

  it("rejects a nudge to a model that did not stop", () => {
    const raw = body([
      system(),
      task("Go.", "finish."),
      calls(["a", "ls", { path: "." }]),
      result("a", "src/"),
      nudge("finish."),
    ]);
    expect(reason(askAgainRule([raw]))).toMatch(
      /message 4 \(nudge\) follows message 3 \(tool result of "ls"\)/,
    );
  });

  it("rejects a restatement to a model that stopped", () => {
    const raw = body([system(), task("Go.", NONE), stopped(), restatement("finish.")]);
    expect(reason(askAgainRule([raw]))).toMatch(/restates the Allowed picks to a model that stopped/);
  });
});

describe("the wake (§10.6, §5.7)", () => {
  const woken = () => [
    body([
      system(),
      task("Triage the report.", NONE),
      stopped("Waiting for the Gate."),
      nudge("escalate, resolve."),
    ]),
  ];

  it("accepts a nudge after the model stopped on an empty list, once a pick opened", () => {
    expect(wokeWhenPickOpened(woken())).toEqual({ ok: true });
    expect(askAgainRule(woken())).toEqual({ ok: true });
  });

  it("rejects a conversation that was never woken", () => {
    expect(reason(wokeWhenPickOpened([body([system(), task("Triage.", NONE), stopped()])]))).toMatch(
      /never nudged/,
    );
    expect(reason(wokeWhenPickOpened(coderRequests()))).toMatch(
      /no nudge followed an empty Allowed-picks list/,
    );
  });
});
