// The time model (issue 30 §3) checked against hand-computed schedules: prefill 8,000 tok/s
// shared, decode 50 tok/s per running sequence, FCFS admission while blocks fit, and vLLM-style
// preemption (youngest running sequence evicted and recomputed) when a decode needs a block.

import { buildModelSim, KV_SCENARIO, KvEngine, type KvSequenceResult } from "@jr2/model-sim";
import { describe, expect, it } from "vitest";
import { chat, menu, systemMessage, userTurn } from "./fixtures.js";

const tools = menu;

function engine(totalBlocks: number) {
  return new KvEngine({ ...KV_SCENARIO, totalBlocks });
}

/** Steps until every submitted sequence settled; returns their results in submit order. */
async function runAll(e: KvEngine, inputs: Parameters<KvEngine["submit"]>[0][]): Promise<KvSequenceResult[]> {
  const results: KvSequenceResult[] = [];
  const pending = inputs.map((input, i) =>
    e.submit(input).then((r) => {
      results[i] = r;
    }),
  );
  for (let guard = 0; e.busy && guard < 1_000_000; guard++) {
    e.step(0.01);
    await Promise.resolve();
  }
  await Promise.all(pending);
  return results;
}

describe("model-sim's KV time model", () => {
  it("prefills uncached tokens at 8,000 tok/s and decodes at 50 tok/s", async () => {
    const e = engine(3000);
    const [r] = await runAll(e, [{ promptTokens: 8_160, cachedTokens: 160, outputTokens: 100 }]);
    // 8,000 uncached tokens: 1 s of prefill; 100 tokens at 50/s: 2 s of decode.
    expect(r!.firstTokenAt).toBeCloseTo(1.01, 1);
    expect(r!.finishedAt).toBeCloseTo(3, 1);
    expect(e.stats()).toMatchObject({
      prefillTokens: 8_000,
      cacheHitTokens: 160,
      preemptions: 0,
      finished: 1,
    });
  });

  it("decodes running sequences side by side, each at 50 tok/s", async () => {
    const e = engine(3000);
    const results = await runAll(e, [
      { promptTokens: 16, cachedTokens: 0, outputTokens: 50 },
      { promptTokens: 16, cachedTokens: 0, outputTokens: 50 },
    ]);
    for (const r of results) expect(r.finishedAt).toBeLessThan(1.1);
  });

  it("queues a sequence whose blocks do not fit until one finishes (no preemption)", async () => {
    const e = engine(10); // 160 tokens
    const results = await runAll(e, [
      { promptTokens: 96, cachedTokens: 0, outputTokens: 10 },
      { promptTokens: 96, cachedTokens: 0, outputTokens: 10 },
    ]);
    expect(results[1]!.firstTokenAt).toBeGreaterThan(results[0]!.finishedAt - 0.02);
    expect(e.stats().preemptions).toBe(0);
  });

  it("preempts the youngest running sequence when a decode needs a block, and recomputes it", async () => {
    const e = engine(10); // 160 tokens: two 64-token prompts fit, their decodes do not
    const results = await runAll(e, [
      { promptTokens: 64, cachedTokens: 0, outputTokens: 60 },
      { promptTokens: 64, cachedTokens: 0, outputTokens: 60 },
    ]);
    expect(results[0]!.preemptions).toBe(0);
    expect(results[1]!.preemptions).toBeGreaterThan(0);
    const s = e.stats();
    expect(s.preemptions).toBe(results[1]!.preemptions);
    expect(s.recomputedTokens).toBeGreaterThanOrEqual(64);
    expect(s.prefillTokens).toBe(128 + s.recomputedTokens);
    expect(s.blocksInUse).toBe(0);
  });

  it("runs a sequence larger than the whole budget alone rather than never", async () => {
    const e = engine(4);
    const [r] = await runAll(e, [{ promptTokens: 200, cachedTokens: 0, outputTokens: 20 }]);
    expect(r!.preemptions).toBe(0);
    expect(e.stats().finished).toBe(1);
  });

  it("refuses a constant that is not positive, naming it", () => {
    expect(() => new KvEngine({ ...KV_SCENARIO, totalBlocks: 0 })).toThrow(/totalBlocks/);
  });
});

describe("model-sim --time-scale", () => {
  it("delays an answer by its simulated time and reports it on /_sim/stats", async () => {
    const { app } = buildModelSim({ timeScale: 5, cacheBlocks: 3000 });
    try {
      const res = await chat(app, {
        model: "obedient",
        messages: [systemMessage, userTurn("Allowed now: approve, request_changes.")],
        tools,
      });
      expect(res.statusCode).toBe(200);
      const stats = (await app.inject({ method: "GET", url: "/_sim/stats" })).json();
      expect(stats.kv).toMatchObject({ preemptions: 0, finished: 1, totalBlocks: 3000 });
      expect(stats.kv.prefillTokens).toBe(stats.promptTokens - stats.cachedTokens);
      // At least the decode of the answer's tokens at 50 tok/s passed in simulated time.
      expect(stats.kv.simulatedSeconds).toBeGreaterThanOrEqual(stats.completionTokens / 50 - 0.05);
    } finally {
      await app.close();
    }
  });

  it("says nothing of kv on /_sim/stats when the time model is off", async () => {
    const { app } = buildModelSim();
    const stats = (await app.inject({ method: "GET", url: "/_sim/stats" })).json();
    expect(stats.kv).toBeUndefined();
    await app.close();
  });
});
