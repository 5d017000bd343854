// bench/kv's replay driver (issue 30 §4), in VIRTUAL simulated time: concurrent review-shaped
// runs whose requests go through the REAL scheduling module (packages/harness's WorkingSet and
// AimdBudget, built dist; each request's shared prefix — its Agent's system prompt + Menu — given
// as the Harness gives it, ADR-0431) — or straight through, first come first served — into model-sim's
// REAL time model (KvEngine: prefill 8,000 tok/s shared, decode 50 tok/s per running sequence,
// vLLM-style preemption) and prefix cache (PrefixCache, LRU of 3,000 blocks of 16 tokens).
//
// The token streams are SYNTHETIC, shaped like jr2's review runs (a shared system prompt and
// Menu per Agent, a unique task, then small appends per request: a receipt or tool result and
// the model's short answer); they are not recorded request bytes. Deterministic: one seed, no
// wall clock, so the gated figures are the same on every machine.

import { AimdBudget } from "../packages/harness/dist/provider/scheduling/kv-budget.js";
import { WorkingSet } from "../packages/harness/dist/provider/scheduling/working-set.js";
import { KV_SCENARIO, KvEngine, PrefixCache } from "../packages/model-sim/dist/index.js";

/** The run shape (tokens, simulated seconds). */
export const SHAPE = {
  systemTokens: 700, // system prompt + Menu, the same for every run of an Agent
  taskTokens: 300, // the Turn's task, unique per run
  turnsPerAgent: 5, // implementer and reviewer alternate
  requestsPerTurn: 4,
  appendTokens: 20, // receipt / tool result added per request
  outputTokens: [8, 16], // the model's answer (min, max), decoded
  maxTokens: 128, // the model entry's maxTokens (the estimate's max output)
  toolGapS: [1, 4], // a Working tool's run between two requests of a Turn
  handoffS: 0.5, // the Orchestrator between Turns
};

const DT = 0.02;

/** A small deterministic PRNG (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Replays `n` runs on `blocks` blocks, scheduling on (`kvTokens` = blocks × 16) or off (FCFS).
 * @returns the figures of one mode.
 */
export async function replay({ n, blocks, scheduling, seed = 30 }) {
  // One PRNG per run: each run's shape is the same whatever order the modes serve it in.
  const between = (random, [lo, hi]) => lo + random() * (hi - lo);
  const engine = new KvEngine({ ...KV_SCENARIO, totalBlocks: blocks });
  const cache = new PrefixCache(KV_SCENARIO.blockSize, blocks);
  let now = 0; // simulated seconds
  const nowMs = () => Math.round(now * 1000);
  const set = scheduling
    ? new WorkingSet({
        endpoint: "sim",
        budget: new AimdBudget(blocks * KV_SCENARIO.blockSize, nowMs),
        now: nowMs,
      })
    : undefined;
  let nextToken = 1_000_000;
  const system = { implementer: [], reviewer: [] };
  for (const agent of Object.keys(system))
    for (let i = 0; i < SHAPE.systemTokens; i++) system[agent].push(nextToken++);
  const totals = { prompt: 0, cached: 0, queued: 0 };
  const turnLatencies = [];
  const timers = []; // { at, fire }
  const sleep = (s) => new Promise((fire) => timers.push({ at: now + s, fire }));

  /** One model request of `conv`: scheduled (maybe waiting), then looked up and run on the engine. */
  async function request(conv, outputTokens) {
    const estimate = conv.tokens.length + SHAPE.maxTokens;
    if (set) {
      conv.member = set.has(conv.id);
      const entered = await set.enter(conv.id, estimate, undefined, () => totals.queued++, conv.prefix);
      if (entered.kind !== "entered") throw new Error("a wait ended without an abort");
    }
    cache.shrinkTo(blocks - engine.decodeBlocks());
    const lookup = cache.lookupAndInsert(conv.tokens);
    totals.prompt += lookup.promptTokens;
    totals.cached += lookup.cachedTokens;
    await engine.submit({
      promptTokens: lookup.promptTokens,
      cachedTokens: lookup.cachedTokens,
      outputTokens,
      relookup: () => cache.lookupAndInsert(conv.tokens).cachedTokens,
    });
    set?.ended(conv.id);
    if (set && conv.member && conv.previousPrompt)
      set.budget.observeContinuation(conv.previousPrompt, lookup.cachedTokens);
    conv.previousPrompt = lookup.promptTokens;
  }

  async function turn(conv, random) {
    const started = now;
    for (let r = 0; r < SHAPE.requestsPerTurn; r++) {
      for (let i = 0; i < SHAPE.appendTokens; i++) conv.tokens.push(nextToken++);
      const out = Math.round(between(random, SHAPE.outputTokens));
      await request(conv, out);
      for (let i = 0; i < out; i++) conv.tokens.push(nextToken++);
      if (r < SHAPE.requestsPerTurn - 1) await sleep(between(random, SHAPE.toolGapS));
    }
    turnLatencies.push(now - started);
  }

  async function run(i) {
    const random = rng(seed * 7919 + i);
    const convs = ["implementer", "reviewer"].map((agent) => {
      const tokens = [...system[agent]];
      for (let t = 0; t < SHAPE.taskTokens; t++) tokens.push(nextToken++);
      // The Agent's system prompt + Menu, in whole blocks: what the Harness's sharedPrefixOf
      // gives the set (ADR-0431), so the estimate counts it once across the Agent's runs as the
      // engine caches it once.
      const prefix = {
        key: agent,
        tokens: Math.floor(SHAPE.systemTokens / KV_SCENARIO.blockSize) * KV_SCENARIO.blockSize,
      };
      return { id: `run${i}/${agent}`, tokens, prefix };
    });
    for (let t = 0; t < SHAPE.turnsPerAgent; t++)
      for (const conv of convs) {
        await turn(conv, random);
        await sleep(SHAPE.handoffS);
      }
    return now;
  }

  const finishes = [];
  let done = 0;
  for (let i = 0; i < n; i++)
    run(i).then((t) => {
      finishes.push(t);
      done++;
    });
  let lastTick = 0;
  while (done < n) {
    // Let every promise settled by the last step run before time moves on.
    for (let k = 0; k < 4; k++) await new Promise((r) => setImmediate(r));
    engine.step(DT);
    now = engine.now;
    for (let k = timers.length - 1; k >= 0; k--)
      if (timers[k].at <= now) {
        timers[k].fire();
        timers.splice(k, 1);
      }
    if (set && now - lastTick >= 1) {
      set.tick();
      lastTick = now;
    }
    if (now > 86_400) throw new Error(`kv replay did not finish in a simulated day (n=${n})`);
  }
  const stats = engine.stats();
  const sorted = [...turnLatencies].sort((a, b) => a - b);
  return {
    cachedRatio: totals.cached / totals.prompt,
    prefillTokens: stats.prefillTokens,
    promptTokens: totals.prompt,
    preemptions: stats.preemptions,
    recomputed: stats.recomputedTokens,
    queued: totals.queued,
    simulatedS: now,
    runsPerHour: (n / now) * 3600,
    p95TurnS: sorted[Math.min(sorted.length - 1, Math.floor(0.95 * sorted.length))],
  };
}

/** Prefill tokens of the same token streams on an unbounded cache: the floor nothing re-bills under. */
export async function unboundedPrefill({ n, seed = 30 }) {
  const r = await replay({ n, blocks: 1 << 22, scheduling: false, seed });
  return r.prefillTokens;
}
