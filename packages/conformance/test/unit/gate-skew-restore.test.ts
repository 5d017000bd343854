import { describe, expect, it } from "vitest";
import {
  gateListed,
  gateRefusedWithAcceptsNow,
  legacySurfacePresented,
  noPromptAdmittedTwice,
  nothingDelivered,
  oldAnswerRendered,
} from "../../src/index.js";
import {
  body,
  calls,
  coderHistory,
  coderRequests,
  movedInState,
  result,
  stopped,
  system,
  TOOLS,
  task,
  turnOver,
} from "../fixtures/conversation.js";

const reason = (v: { ok: boolean; reason?: string }) => (v.ok ? "" : (v as { reason: string }).reason);

describe("Gate 409 with acceptsNow (§10.7)", () => {
  const refusal = {
    status: 409,
    body: JSON.stringify({
      error: "the run would not take `merge` now",
      code: "JR2_ERR_GATE_NOT_NOW",
      acceptsNow: ["reject"],
    }),
  };

  it("accepts a 409 with an error, a code and acceptsNow", () => {
    expect(gateRefusedWithAcceptsNow(refusal, ["reject"])).toEqual({ ok: true });
  });

  it("rejects a send answered 200, a 409 without acceptsNow, and the wrong acceptsNow", () => {
    expect(reason(gateRefusedWithAcceptsNow({ status: 200, body: '{"moved":true}' }))).toMatch(
      /answered 200, not 409/,
    );
    const bare = { status: 409, body: JSON.stringify({ error: "no", code: "JR2_ERR_GATE_NOT_NOW" }) };
    expect(reason(gateRefusedWithAcceptsNow(bare))).toMatch(/no `acceptsNow`/);
    expect(reason(gateRefusedWithAcceptsNow(refusal, ["merge"]))).toMatch(
      /acceptsNow is \[reject\], expected \[merge\]/,
    );
    const uncoded = { status: 409, body: JSON.stringify({ error: "no", acceptsNow: [] }) };
    expect(reason(gateRefusedWithAcceptsNow(uncoded))).toMatch(/not a JR2_ERR_ code/);
  });

  it("tells a refused send that moved the run from one that delivered nothing", () => {
    const run = (value: unknown) => ({ status: 200, body: JSON.stringify({ value, context: { n: 1 } }) });
    expect(nothingDelivered(run({ triage: "waiting" }), run({ triage: "waiting" }))).toEqual({ ok: true });
    expect(reason(nothingDelivered(run({ triage: "waiting" }), run("done")))).toMatch(/the run moved/);
  });

  it("reads a listed Gate's accepts and acceptsNow", () => {
    const run = {
      status: 200,
      body: JSON.stringify({
        gates: [
          {
            id: "merge_gate",
            path: "awaitingMerge",
            accepts: [{ name: "merge" }, { name: "reject" }],
            acceptsNow: ["merge", "reject"],
          },
        ],
      }),
    };
    expect(gateListed(run, "merge_gate", ["merge", "reject"])).toEqual({ ok: true });
    expect(reason(gateListed(run, "other"))).toMatch(/no open Gate "other"/);
    const odd = {
      status: 200,
      body: run.body.replace('"acceptsNow":["merge","reject"]', '"acceptsNow":["approve"]'),
    };
    expect(reason(gateListed(odd, "merge_gate"))).toMatch(/acceptsNow names approve outside its accepts/);
  });
});

describe("skew readers (§10.8, §7.6)", () => {
  const legacyTools = ["dispute", "finish"];
  const legacyRequest = (allowed: string) =>
    body([system(), task("Address the review comments.", allowed)], {
      tools: [TOOLS[0], TOOLS[1], TOOLS[3], TOOLS[4]],
    });

  it("accepts a pre-Menu surface presented as both the tools block and the Allowed picks", () => {
    expect(legacySurfacePresented(legacyRequest("dispute, finish."), legacyTools)).toEqual({ ok: true });
  });

  it("rejects an old surface's tools narrowed further, or missing from the tools block", () => {
    expect(reason(legacySurfacePresented(legacyRequest("finish."), legacyTools))).toMatch(/are all allowed/);
    expect(reason(legacySurfacePresented(body(coderHistory().slice(0, 2)), legacyTools))).toMatch(
      /presents \[approve, dispute, finish\]/,
    );
  });

  const afterPick = (receipt: string) => [
    body([
      system(),
      task("Go.", "dispute, finish."),
      calls(["p", "dispute", { reason: "r" }]),
      result("p", receipt),
    ]),
  ];

  it("accepts an answer without moved rendered as delivered, with no claim about moving", () => {
    const text = 'Delivered "dispute". Your turn is not over.\nAllowed now: dispute, finish.';
    expect(
      oldAnswerRendered(afterPick(text), "dispute", { withoutMoved: true, withoutAllowed: false }),
    ).toEqual({
      ok: true,
    });
    expect(
      oldAnswerRendered(afterPick('Delivered "dispute". Your turn is not over.'), "dispute", {
        withoutMoved: true,
        withoutAllowed: true,
      }),
    ).toEqual({ ok: true });
  });

  it("rejects absent moved read as moved (or as not moved), and absent allowed read as empty", () => {
    const claims = afterPick(movedInState("dispute", "dispute, finish."));
    expect(
      reason(oldAnswerRendered(claims, "dispute", { withoutMoved: true, withoutAllowed: false })),
    ).toMatch(/rendered as moved-in-state/);
    const asFalse = afterPick(
      "dispute is not allowed in the workflow's current state, whatever its arguments. Your turn is not over. Do not repeat this call — pick one of the allowed tools.\nAllowed now: dispute, finish.",
    );
    expect(oldAnswerRendered(asFalse, "dispute", { withoutMoved: true, withoutAllowed: false }).ok).toBe(
      false,
    );
    const empty = afterPick(
      'Delivered "dispute". Your turn is not over.\nAllowed now: none. Every pick is refused until the workflow opens one.',
    );
    expect(reason(oldAnswerRendered(empty, "dispute", { withoutMoved: true, withoutAllowed: true }))).toMatch(
      /absent is not empty/,
    );
  });
});

describe("restore: no prompt admitted twice outside the admit-sent window (§10.9)", () => {
  const readmitted = (copies: number) => {
    const m = [system(), task("Implement the feature.", "finish.")];
    for (let i = 1; i < copies; i++)
      m.push(stopped("Working on it."), task("Implement the feature.", "finish."));
    return [body(m)];
  };

  it("accepts a conversation whose every Turn prompt came once", () => {
    expect(noPromptAdmittedTwice(coderRequests(), "ledgered")).toEqual({ ok: true });
  });

  it("accepts the same prompt in two Turns that each ended", () => {
    const m = [
      system(),
      task("Address the review comments.", "dispute, finish."),
      calls(["a", "finish", { summary: "s" }]),
      result("a", turnOver("finish")),
      task("Address the review comments.", "dispute, finish."),
    ];
    expect(noPromptAdmittedTwice([body(m)], "pick-delivered")).toEqual({ ok: true });
  });

  it("accepts a second copy after a crash at admit-sent, and rejects a third", () => {
    expect(noPromptAdmittedTwice(readmitted(2), "admit-sent")).toEqual({ ok: true });
    expect(reason(noPromptAdmittedTwice(readmitted(3), "admit-sent"))).toMatch(/reached the model 3 times/);
  });

  it("rejects a second copy after a crash anywhere else", () => {
    for (const phase of ["ledgered", "pick-delivered", "gate-open", "timer-armed", "random"] as const) {
      expect(reason(noPromptAdmittedTwice(readmitted(2), phase))).toMatch(
        /only a crash at admit-sent may re-send it/,
      );
    }
  });
});
