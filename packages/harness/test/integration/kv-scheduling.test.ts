/**
 * KV scheduling through the Harness's wire (issue 30 §2): with a budget one conversation fills,
 * a second conversation's Submission waits — a `queued` stream event with its position and
 * reason, no model request sent — and an abort ends the wait: the Submission settles `aborted`
 * at once and never reaches the model. A waiting Submission is let in once the first
 * conversation leaves the set (idle), and its settlement says how long it waited.
 */
import type { StreamEvent } from "@jr2/wire";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../fixtures/fake-openai.js";
import { answer, type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";
import { auth, harnessFor } from "../fixtures/harness.js";

let model: FakeOpenAI;
let orch: FakeOrchestrator;
beforeEach(async () => {
  model = await startFakeOpenAI();
  orch = await startFakeOrchestrator();
  orch.answer = () => answer({ allowed: [], turnComplete: true });
});
afterEach(async () => {
  await model.close();
  await orch.close();
});

/** One model entry whose budget a single conversation fills (its maxTokens alone is 1,024). */
const scheduled = (m: FakeOpenAI, idleMs: number) => ({
  models: {
    sim: {
      baseUrl: m.baseUrl,
      id: "sim",
      contextWindow: 32768,
      maxTokens: 1024,
      temperature: 0,
      kvTokens: 1500,
    },
  },
  kvIdleLeaveMs: idleMs,
});
const approve = { toolCalls: [{ name: "approve", arguments: JSON.stringify({ summary: "ok" }) }] };

describe("KV scheduling on the Harness's wire (issue 30)", () => {
  it("a waiting Submission streams `queued`, sends nothing, and an abort settles it aborted", async () => {
    const h = harnessFor(model, orch, scheduled(model, 60_000));
    model.script([approve]);
    expect((await h.run("r1/coder/aa")).settlement.outcome).toBe("completed");
    const sent = model.bodies.length;

    const admitted = await h.admit("r2/coder/bb", {});
    expect(admitted.statusCode).toBe(200);
    const { submissionId, offset } = admitted.json() as { submissionId: string; offset: string };
    // The queued event arrives while the Submission waits.
    let queued: StreamEvent | undefined;
    let next = offset;
    for (let i = 0; i < 50 && !queued; i++) {
      const res = await h.app.inject({
        method: "GET",
        url: `/conversations/${encodeURIComponent("r2/coder/bb")}/stream?offset=${next}&wait=1`,
        headers: auth,
      });
      if (res.statusCode !== 200) continue;
      const page = res.json() as { events: StreamEvent[]; nextOffset: string };
      next = page.nextOffset;
      queued = page.events.find((e) => e.type === "queued");
    }
    expect(queued).toMatchObject({
      type: "queued",
      submissionId,
      position: 1,
      reason: expect.stringMatching(/1 conversations hold ~\d+ of 1500 tokens/),
    });
    expect(model.bodies).toHaveLength(sent);

    const aborted = await h.app.inject({
      method: "POST",
      url: `/conversations/${encodeURIComponent("r2/coder/bb")}/abort`,
      headers: auth,
    });
    expect(aborted.json()).toEqual({ aborted: true });
    const { settlement } = await h.settled("r2/coder/bb", submissionId, next);
    expect(settlement.outcome).toBe("aborted");
    // The abort settles at once, yet says how long the Submission waited (ADR-0432).
    expect(settlement.kvWaitMs).toBeTypeOf("number");
    expect(model.bodies).toHaveLength(sent);
    await h.app.close();
  });

  it("lets the waiter in once the first conversation idles out, and says how long it waited", async () => {
    const h = harnessFor(model, orch, scheduled(model, 1_500));
    model.script([approve, approve]);
    expect((await h.run("r1/coder/aa")).settlement.outcome).toBe("completed");
    const { events, settlement } = await h.run("r2/coder/bb");
    expect(events.some((e) => e.type === "queued")).toBe(true);
    expect(settlement.outcome).toBe("completed");
    expect(settlement.kvWaitMs).toBeGreaterThan(0);
    const metrics = await h.app.inject({ method: "GET", url: "/metrics" });
    expect(metrics.body).toMatch(/jr2_kv_queue_budget_tokens\{model="sim"\} 1500/);
    // Two entries into the set: the first at once, the second after its wait.
    expect(metrics.body).toMatch(/jr2_kv_queue_wait_seconds_bucket\{le="0.1",model="sim"\} 1\n/);
    expect(metrics.body).toMatch(/jr2_kv_queue_wait_seconds_count\{model="sim"\} 2/);
    await h.app.close();
  });
});
