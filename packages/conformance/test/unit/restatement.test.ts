import { describe, expect, it } from "vitest";
import { countRestatements, noRequestAfterTurnEnded, restatementsWellPlaced } from "../../src/index.js";
import {
  body,
  calls,
  coderHistory,
  coderRequests,
  inserted,
  type Message,
  restatement,
  result,
  system,
  task,
  turnOver,
} from "../fixtures/conversation.js";

const reason = (v: { ok: boolean; reason?: string }) => (v.ok ? "" : (v as { reason: string }).reason);
const one = (messages: Message[]) => [body(messages)];

describe("a restatement sits right after the model answer's last tool result (§10.3)", () => {
  it("accepts the coder conversation, whose restatement follows the ls result", () => {
    expect(restatementsWellPlaced(coderRequests())).toEqual({ ok: true });
    expect(countRestatements(coderRequests())).toBe(1);
  });

  it("accepts a restatement after an answer with two tool calls, once both results are in", () => {
    const m = [
      system(),
      task("Implement the feature.", "finish."),
      calls(["a", "ls", { path: "." }], ["b", "read", { path: "README.md" }]),
      result("a", "src/"),
      result("b", "# readme"),
      restatement("none. Every pick is refused until the workflow opens one."),
    ];
    expect(restatementsWellPlaced(one(m))).toEqual({ ok: true });
  });

  it("rejects a restatement between two tool results of one answer", () => {
    const m = [
      system(),
      task("Implement the feature.", "finish."),
      calls(["a", "ls", { path: "." }], ["b", "read", { path: "README.md" }]),
      result("a", "src/"),
      restatement("dispute, finish."),
      result("b", "# readme"),
    ];
    expect(reason(restatementsWellPlaced(one(m)))).toMatch(
      /message 4 \(restatement\) sits before the tool result of "read" \(b\)/,
    );
  });

  it("rejects a restatement right after the model answer, before its tool results", () => {
    const m = inserted(coderHistory().slice(0, 3), 3, restatement("dispute, finish."));
    expect(reason(restatementsWellPlaced(one(m)))).toMatch(
      /message 3 \(restatement\) follows message 2 \(model answer calling ls\)/,
    );
  });

  it("rejects a restatement right after the Turn's user message", () => {
    const m = [system(), task("Implement the feature.", "finish."), restatement("dispute, finish.")];
    expect(reason(restatementsWellPlaced(one(m)))).toMatch(
      /follows message 1 \(task\), not the last tool result/,
    );
  });

  it("rejects a restatement after the Turn ended", () => {
    const h = coderHistory();
    const m = inserted(h.slice(0, 7), 7, restatement("approve, dispute, finish."));
    expect(reason(restatementsWellPlaced(one(m)))).toMatch(
      /message 7 restates the Allowed picks after the Turn ended at message 6 \(tool result of "finish"\)/,
    );
  });

  it("rejects a second restatement with no change", () => {
    const m = [
      ...coderHistory().slice(0, 5),
      calls(["c9", "ls", { path: "src" }]),
      result("c9", "index.ts"),
      restatement("finish, dispute."),
    ];
    expect(reason(restatementsWellPlaced(one(m)))).toMatch(
      /message 7 restates "Allowed now: finish, dispute", which the model already read at message 4 \(restatement\)/,
    );
  });

  it("rejects a restatement of the list a receipt just stated", () => {
    const m = [
      system(),
      task("Address the review comments.", "dispute, finish."),
      calls(["x", "approve", { summary: "s" }], ["y", "ls", { path: "." }]),
      result(
        "x",
        "approve is not allowed in the workflow's current state, whatever its arguments. Your turn is not over. Do not repeat this call — pick one of the allowed tools.\nAllowed now: dispute, finish.",
      ),
      result("y", "src/"),
      restatement("dispute, finish."),
    ];
    expect(reason(restatementsWellPlaced(one(m)))).toMatch(
      /already read at message 3 \(tool result of "approve"\)/,
    );
  });

  it("checks every request, not only the newest", () => {
    const rs = coderRequests();
    rs[1] = body([...coderHistory().slice(0, 2), restatement("dispute, finish.")]);
    expect(reason(restatementsWellPlaced(rs))).toMatch(/^request 1:/);
  });
});

describe("no model request after the Turn ended (§10.3, §7.2 step 4)", () => {
  it("accepts the coder conversation: the next request opens with the next Turn's message", () => {
    expect(noRequestAfterTurnEnded(coderRequests())).toEqual({ ok: true });
  });

  it("rejects a request sent after the turn-over receipt", () => {
    const rs = [...coderRequests(), body(coderHistory().slice(0, 16))];
    expect(reason(noRequestAfterTurnEnded(rs))).toMatch(
      /request 6 was sent after the Turn ended at message 15 \(tool result of "dispute"\)/,
    );
  });

  it("rejects a request after a turn-over followed only by a Working-tool result", () => {
    const m = [
      system(),
      task("Implement the feature.", "finish."),
      calls(["a", "finish", { summary: "done" }], ["b", "ls", { path: "." }]),
      result("a", turnOver("finish")),
      result("b", "src/"),
    ];
    expect(noRequestAfterTurnEnded(one(m)).ok).toBe(false);
  });
});
