// The working set counts KV as the engine holds it (ADR-0431): the system prompt + tools block
// that every conversation of one Agent opens with is cached once by the engine, so the set
// counts it once. Before, each member's estimate carried it again and a 48,000-token budget
// admitted ~12 review runs where it holds 20 (scheduling slowed runs with no cache pressure).
import { describe, expect, it } from "vitest";
import { ModelTable as ModelTableSchema } from "../../src/provider/models.js";
import { addedTokens, heldTokens } from "../../src/provider/scheduling/kv-accounting.js";
import { AimdBudget } from "../../src/provider/scheduling/kv-budget.js";
import { sharedPrefixOf } from "../../src/provider/scheduling/kv-estimate.js";
import { createKvScheduling } from "../../src/provider/scheduling/kv-scheduling.js";
import { WorkingSet } from "../../src/provider/scheduling/working-set.js";
import { createMemoryWorkingSetStore } from "../../src/provider/scheduling/working-set-store.js";

function setUp(budget: number, store = createMemoryWorkingSetStore()) {
  const clock = { t: 0 };
  const set = new WorkingSet({
    endpoint: "http://gpu:8000/v1",
    budget: new AimdBudget(budget, () => clock.t),
    now: () => clock.t,
    store,
  });
  return { set, clock, store };
}

async function settled<T>(p: Promise<T>): Promise<T | "pending"> {
  return Promise.race([p, new Promise<"pending">((r) => setTimeout(() => r("pending"), 0))]);
}

const reviewer = { key: "reviewer-system+tools", tokens: 600 };
const implementer = { key: "implementer-system+tools", tokens: 600 };

describe("KV accounting with a shared prefix", () => {
  it("counts a prefix once however many hold it, and whole for those without one", () => {
    const a = { estimate: 750, prefix: reviewer };
    const b = { estimate: 800, prefix: reviewer };
    expect(heldTokens([a, b])).toBe(600 + 150 + 200);
    expect(addedTokens([a], b)).toBe(200);
    expect(addedTokens([a], { estimate: 800, prefix: implementer })).toBe(800);
    expect(addedTokens([a], { estimate: 800 })).toBe(800);
    // A prefix is never counted larger than the estimate that carries it.
    expect(heldTokens([{ estimate: 100, prefix: reviewer }])).toBe(100);
  });

  it("admits two conversations of one Agent where the budget holds the prefix and two tails", async () => {
    const { set } = setUp(1000); // prefix 600 + tails 150 + 150 = 900 ≤ 1000 < 750 + 750
    expect(await set.enter("run1/reviewer", 750, undefined, undefined, reviewer)).toMatchObject({
      kind: "entered",
    });
    expect(await settled(set.enter("run2/reviewer", 750, undefined, undefined, reviewer))).toMatchObject({
      kind: "entered",
      waitedMs: 0,
    });
    expect(set.snapshot()).toMatchObject({ members: 2, waiting: 0, usedTokens: 900 });
    // Another Agent's prefix is not held: it waits for its whole estimate.
    const reasons: string[] = [];
    const other = set.enter("run3/implementer", 750, undefined, (n) => reasons.push(n.reason), implementer);
    expect(await settled(other)).toBe("pending");
    expect(reasons[0]).toMatch(/hold ~900 of 1000 tokens; this one needs ~750/);
  });

  it("without the prefix (or with different ones) the same budget admits only one", async () => {
    const { set } = setUp(1000);
    await set.enter("run1/reviewer", 750);
    expect(await settled(set.enter("run2/reviewer", 750))).toBe("pending");
  });

  it("keeps the prefix held while one member carrying it stays, and the store keeps it", async () => {
    const { set, store } = setUp(1000);
    await set.enter("run1/reviewer", 750, undefined, undefined, reviewer);
    await set.enter("run2/reviewer", 750, undefined, undefined, reviewer);
    set.leave("run1/reviewer");
    expect(set.snapshot().usedTokens).toBe(750);
    const restarted = setUp(1000, store).set;
    expect(restarted.snapshot().usedTokens).toBe(750);
    expect(
      await settled(restarted.enter("run3/reviewer", 750, undefined, undefined, reviewer)),
    ).toMatchObject({
      kind: "entered",
    });
  });
});

describe("members that grow past the budget", () => {
  it("shed the idle run holding the least, never the first or a running one; its next request waits", async () => {
    const { set } = setUp(1000); // admits up to 90 % (900), sheds past 1000
    await set.enter("run1/reviewer", 700, undefined, undefined, reviewer); // first in: kept
    await set.enter("run2/reviewer", 700, undefined, undefined, reviewer);
    await set.enter("run3/reviewer", 700, undefined, undefined, reviewer); // still running
    set.ended("run1/reviewer");
    set.ended("run2/reviewer");
    expect(set.snapshot().usedTokens).toBe(600 + 100 + 100 + 100);
    // run1's next prompt carries its answer and a tool result: tail 250, the set holds 1050.
    expect(await set.enter("run1/reviewer", 850, undefined, undefined, reviewer)).toMatchObject({
      waitedMs: 0,
    });
    expect(set.has("run2/reviewer")).toBe(false);
    expect(set.has("run3/reviewer")).toBe(true);
    expect(set.snapshot().usedTokens).toBe(600 + 250 + 100);
    const again = set.enter("run2/reviewer", 720, undefined, undefined, reviewer);
    expect(await settled(again)).toBe("pending");
    set.leave("run1/reviewer");
    expect(await again).toMatchObject({ kind: "entered" });
  });

  it("admits only up to 90 % of the budget: room for the members to grow", async () => {
    const { set } = setUp(1000);
    await set.enter("a", 500);
    expect(await settled(set.enter("b", 450))).toBe("pending"); // 950 fits 1000, not 900
  });
});

describe("the Harness's shared prefix of a request", () => {
  const tools = [{ name: "finish", description: "end the Turn", parameters: { type: "object" } }];

  it("is the system prompt + tools block, keyed by its bytes, in whole 16-token blocks", () => {
    const a = sharedPrefixOf({ systemPrompt: "You review diffs. ".repeat(200), tools, messages: ["a"] });
    const b = sharedPrefixOf({ systemPrompt: "You review diffs. ".repeat(200), tools, messages: ["b", "c"] });
    const c = sharedPrefixOf({ systemPrompt: "You implement. ".repeat(200), tools, messages: ["a"] });
    expect(a).toEqual(b);
    expect(a!.key).not.toBe(c!.key);
    expect(a!.tokens % 16).toBe(0);
    expect(a!.tokens).toBeGreaterThan(900); // ~3,700 characters at 3.5 a token
    expect(sharedPrefixOf({ messages: ["a"] })).toBeUndefined();
  });

  it("lets two conversations of one Agent into a budget that holds the prompt once and two tails", async () => {
    const models = ModelTableSchema.parse({
      reviewer: {
        baseUrl: "http://gpu:8000/v1",
        id: "m",
        contextWindow: 32768,
        maxTokens: 256,
        kvTokens: 15_000,
      },
    });
    const kv = createKvScheduling({ models, notice: () => {} });
    try {
      const systemPrompt = "Review the diff against the task; pick approve or reject. ".repeat(600); // ~10k tokens
      const none = () => {};
      const queued: string[] = [];
      const first = kv.conversation("run1/reviewer", models.reviewer!, none, none)!;
      const second = kv.conversation("run2/reviewer", models.reviewer!, (n) => queued.push(n.reason), none)!;
      await first.enter({ systemPrompt, tools, messages: ["task one ".repeat(300)] }, 256);
      const entered = await settled(
        second.enter({ systemPrompt, tools, messages: ["task two ".repeat(300)] }, 256),
      );
      expect(entered).toMatchObject({ kind: "entered", waitedMs: 0 });
      expect(queued).toEqual([]);
      expect(kv.snapshot()["http://gpu:8000/v1"]).toMatchObject({ members: 2, waiting: 0 });
      expect(kv.snapshot()["http://gpu:8000/v1"]!.usedTokens).toBeLessThanOrEqual(0.9 * 15_000);
    } finally {
      kv.close();
    }
  });
});
