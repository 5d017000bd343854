/**
 * Regression (fresh-clone CI, packages/orchestrator/test/integration/kv-scheduling.test.ts: the
 * run feeds held `queued` lines with a position but no `queued` line with `waitedMs`).
 *
 * Root cause: a conversation's side of the working set (conversation-kv.ts) told the Turn how
 * long a request waited only when the wait ended with the conversation *entered* and lasted
 * over 0 ms, and the settlement carried `kvWaitMs` only when the sum was over 0 (the
 * Orchestrator's follow.ts also skipped a 0). A request that queued and whose wait then ended by
 * an abort — the Orchestrator aborts the Submission when a pick ends the Turn, a cancel, the
 * deadline — or was let in within the same millisecond left a `queued` line on the feed and
 * never said how long the Turn waited. Every wait that was told (`onQueued`) is now told when
 * it ends (`onWaited`, entered or aborted, 0 ms included).
 */
import { describe, expect, it } from "vitest";
import { conversationKv } from "../../src/provider/scheduling/conversation-kv.js";
import { AimdBudget } from "../../src/provider/scheduling/kv-budget.js";
import { WorkingSet } from "../../src/provider/scheduling/working-set.js";

function setUp() {
  const clock = { t: 1_000 };
  const set = new WorkingSet({
    endpoint: "http://gpu:8000/v1",
    budget: new AimdBudget(1000, () => clock.t),
    now: () => clock.t,
  });
  const told: Array<{ who: string; what: string; ms?: number }> = [];
  const side = (who: string) =>
    conversationKv(
      set,
      who,
      () => told.push({ who, what: "queued" }),
      (ms) => told.push({ who, what: "waited", ms }),
    );
  // 3,500 characters of context ≈ 1,000 tokens: one conversation fills the budget.
  const context = { messages: ["x".repeat(3_400)] };
  return { set, clock, told, side, context };
}

describe("a KV wait that was told is always told when it ends", () => {
  it("an abort that ends a wait still says how long the Turn waited", async () => {
    const { clock, told, side, context } = setUp();
    await side("r1/coder/a").enter(context, 0);
    const ac = new AbortController();
    const waiting = side("r2/coder/b").enter(context, 0, ac.signal);
    clock.t += 2_500;
    ac.abort();
    expect(await waiting).toEqual({ kind: "aborted", waitedMs: 2_500 });
    expect(told).toEqual([
      { who: "r2/coder/b", what: "queued" },
      { who: "r2/coder/b", what: "waited", ms: 2_500 },
    ]);
  });

  it("a wait let in within the same millisecond is told as 0 ms, not dropped", async () => {
    const { set, told, side, context } = setUp();
    await side("r1/coder/a").enter(context, 0);
    const waiting = side("r2/coder/b").enter(context, 0);
    set.leave("r1/coder/a"); // room at once, no time passed
    expect(await waiting).toEqual({ kind: "entered", waitedMs: 0 });
    expect(told).toEqual([
      { who: "r2/coder/b", what: "queued" },
      { who: "r2/coder/b", what: "waited", ms: 0 },
    ]);
  });

  it("a request that never waited tells nothing", async () => {
    const { told, side, context } = setUp();
    await side("r1/coder/a").enter(context, 0);
    expect(told).toEqual([]);
  });
});
