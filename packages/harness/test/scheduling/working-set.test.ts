// The KV working set (issue 30 §1–2): room by estimated KV, strict queue order (warm first, then
// age), idle members leave, nothing refused (maxWait on an unchanged set), aborts end a wait,
// a budget smaller than one conversation admits it alone, the per-conversation FIFO intact.

import { describe, expect, it } from "vitest";
import { AimdBudget } from "../../src/provider/scheduling/kv-budget.js";
import { parseVllmMetrics } from "../../src/provider/scheduling/vllm-metrics.js";
import { type EnterOutcome, WorkingSet } from "../../src/provider/scheduling/working-set.js";
import { createMemoryWorkingSetStore } from "../../src/provider/scheduling/working-set-store.js";

function setUp(budget = 1000, extra: Partial<ConstructorParameters<typeof WorkingSet>[0]> = {}) {
  const clock = { t: 0 };
  const notices: string[] = [];
  const set = new WorkingSet({
    endpoint: "http://gpu:8000/v1",
    budget: new AimdBudget(budget, () => clock.t),
    now: () => clock.t,
    notice: (m) => notices.push(m),
    ...extra,
  });
  return { set, clock, notices };
}

/** Whether the promise settled (after the microtasks already queued). */
async function settled<T>(p: Promise<T>): Promise<T | "pending"> {
  return Promise.race([p, new Promise<"pending">((r) => setTimeout(() => r("pending"), 0))]);
}

describe("KV working set", () => {
  it("admits while the estimates fit, and queues the next with its position and reason", async () => {
    const { set } = setUp(1000);
    expect(await set.enter("a", 600)).toEqual({ kind: "entered", waitedMs: 0 });
    const queued: Array<{ position: number; reason: string }> = [];
    const b = set.enter("b", 600, undefined, (n) => queued.push(n));
    expect(await settled(b)).toBe("pending");
    expect(queued).toEqual([
      {
        position: 1,
        reason: expect.stringMatching(/1 conversations hold ~600 of 1000 tokens; this one needs ~600/),
      },
    ]);
    expect(set.snapshot()).toMatchObject({ members: 1, waiting: 1, usedTokens: 600 });
  });

  it("lets an idle member leave after 30 s and admits the waiter, reporting how long it waited", async () => {
    const { set, clock } = setUp(1000);
    await set.enter("a", 600);
    const b = set.enter("b", 600);
    set.ended("a");
    clock.t = 29_000;
    set.tick();
    expect(await settled(b)).toBe("pending");
    clock.t = 30_000;
    set.tick();
    expect(await b).toEqual({ kind: "entered", waitedMs: 30_000 });
    expect(set.has("a")).toBe(false);
  });

  it("a member's next request never waits (its own FIFO is untouched)", async () => {
    const { set } = setUp(1000);
    await set.enter("a", 900);
    const b = set.enter("b", 500);
    set.ended("a");
    expect(await set.enter("a", 950)).toEqual({ kind: "entered", waitedMs: 0 });
    expect(await settled(b)).toBe("pending");
  });

  it("re-admits a warm conversation before an older cold one", async () => {
    const { set, clock } = setUp(1000);
    await set.enter("w", 600);
    set.ended("w");
    clock.t = 30_000;
    set.tick(); // w leaves: warm for 5 min
    await set.enter("x", 600); // x takes the room
    clock.t = 31_000;
    const order: string[] = [];
    const cold = set.enter("cold", 600).then(() => order.push("cold"));
    clock.t = 40_000;
    const warm = set.enter("w", 600).then(() => order.push("w"));
    set.leave("x");
    await warm;
    expect(order).toEqual(["w"]);
    set.leave("w");
    await cold;
    expect(order).toEqual(["w", "cold"]);
  });

  it("never refuses: past maxWait on an unchanged set the oldest waiter enters over budget, said once", async () => {
    const { set, clock, notices } = setUp(1000, { maxWaitMs: 300_000 });
    await set.enter("a", 900); // a keeps a request running: it never idles out
    const b = set.enter("b", 900);
    clock.t = 299_000;
    set.tick();
    expect(await settled(b)).toBe("pending");
    clock.t = 300_000;
    set.tick();
    expect(await b).toEqual({ kind: "entered", waitedMs: 300_000 });
    expect(notices.filter((n) => /waited 300 s/.test(n))).toHaveLength(1);
  });

  it("an abort ends a wait at once and the queue moves on", async () => {
    const { set } = setUp(1000);
    await set.enter("a", 800);
    const ac = new AbortController();
    const b = set.enter("b", 200, ac.signal);
    const c = set.enter("c", 50);
    expect(await settled(c)).toBe("pending"); // strict order: c is behind b
    ac.abort();
    expect(await b).toMatchObject({ kind: "aborted" } satisfies Partial<EnterOutcome>);
    expect(await c).toMatchObject({ kind: "entered" });
  });

  it("admits a conversation larger than the budget alone, and says so once", async () => {
    const { set, notices } = setUp(100);
    expect(await set.enter("big", 5000)).toMatchObject({ kind: "entered" });
    set.leave("big");
    await set.enter("big2", 5000);
    expect(notices.filter((n) => /runs alone/.test(n))).toHaveLength(1);
  });

  it("llama-server slots bound the live conversations", async () => {
    const { set } = setUp(1_000_000, { maxMembers: 2 });
    await set.enter("a", 10);
    await set.enter("b", 10);
    const reasons: string[] = [];
    const c = set.enter("c", 10, undefined, (n) => reasons.push(n.reason));
    expect(await settled(c)).toBe("pending");
    expect(reasons[0]).toMatch(/2 conversations at once \(its slots\)/);
  });

  it("keeps its members in the store and a new set (a restarted Harness) holds them", async () => {
    const store = createMemoryWorkingSetStore();
    const first = setUp(1000, { store });
    await first.set.enter("a", 700);
    const second = setUp(1000, { store });
    expect(second.set.has("a")).toBe(true);
    expect(await settled(second.set.enter("b", 700))).toBe("pending");
  });
});

describe("AIMD budget", () => {
  it("cuts on a cold continuation or preemptions (once per 10 s, floor a quarter) and grows back to the ceiling", () => {
    const clock = { t: 0 };
    const b = new AimdBudget(1000, () => clock.t);
    b.observeContinuation(1000, 992); // the previous prompt's blocks all found: no cut
    expect(b.current()).toBe(1000);
    b.observeContinuation(1000, 100);
    expect(b.current()).toBe(700);
    b.observePreemptions(3);
    expect(b.current()).toBe(700);
    clock.t = 10_000;
    b.observePreemptions(1);
    expect(b.current()).toBeCloseTo(490);
    for (let i = 0; i < 100; i++) {
      clock.t += 5_000;
      b.observeContinuation(1000, 1040);
    }
    expect(b.current()).toBe(1000);
  });
});

describe("vLLM /metrics (kvTokens: auto)", () => {
  it("reads the budget from cache_config_info and sums preemptions", () => {
    const text = [
      "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig",
      'vllm:cache_config_info{block_size="16",cache_dtype="auto",num_gpu_blocks="3000"} 1.0',
      'vllm:num_preemptions_total{model_name="a"} 4.0',
      'vllm:num_preemptions_total{model_name="b"} 1.0',
      'vllm:kv_cache_usage_perc{model_name="a"} 0.42',
    ].join("\n");
    expect(parseVllmMetrics(text)).toEqual({ budgetTokens: 48_000, preemptions: 5, usage: 0.42 });
  });
});
