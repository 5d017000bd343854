/**
 * Issue 30 "Done when" on the real stack (model-sim, Orchestrator, Harness processes): 30
 * concurrent `review` runs on a KV budget that holds about one run's two conversations all go
 * to `done` with scheduling on, none waiting past `maxWaitS`; the run feeds show `queued` lines
 * (position and reason) and each waiting Submission's wait in all; a run cancelled while one of
 * its requests waits for the working set ends cancelled and that request never reaches the model.
 * Needs the built binaries.
 */
import { fileURLToPath } from "node:url";
import type { RunFeedEvent } from "@jr2/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, startStack } from "../../../conformance/src/index.js";
import { reviewModels } from "./example-models.js";
import { orchestratorHttp } from "./stack-http.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../../../../examples/workflows/", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RUNS = 30;
const MAX_WAIT_S = 120;

describe.skipIf(missing.length > 0)("KV scheduling on the real stack (issue 30)", () => {
  let stack: Stack;
  const { http, events } = orchestratorHttp(() => stack);

  beforeAll(async () => {
    stack = await startStack("process", {
      repoRoot,
      workflowsDir,
      // Both Agents on one model-sim endpoint, with a budget about one run's conversations fill.
      models: (baseUrl) => {
        const m = reviewModels(baseUrl);
        const kv = { kvTokens: 7000, maxWaitS: MAX_WAIT_S };
        return { coder: { ...m.coder, ...kv }, reviewer: { ...m.reviewer, ...kv } };
      },
      harnessEnv: { JR2_KV_IDLE_LEAVE_MS: "300", JR2_ENDPOINT_CONCURRENCY: "64" },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  /** Starts a `review` run; its runId. */
  async function start(task: string): Promise<string> {
    const started = await http("/workflows/review/runs", {
      method: "POST",
      body: JSON.stringify({ input: { task } }),
    });
    expect(started.status).toBe(201);
    return started.body?.runId as string;
  }

  /** Polls until no run is running, answering each `merge` Gate; their final statuses. */
  async function finish(runIds: string[], deadlineMs: number): Promise<Map<string, string>> {
    const statuses = new Map<string, string>();
    const deadline = Date.now() + deadlineMs;
    while (statuses.size < runIds.length) {
      for (const runId of runIds) {
        if (statuses.has(runId)) continue;
        const { body } = await http(`/runs/${runId}`);
        if (body?.status !== "running") {
          statuses.set(runId, body?.status);
          continue;
        }
        for (const gate of (body.gates as Array<{ id: string; acceptsNow: string[] }>) ?? [])
          if (gate.acceptsNow.includes("merge"))
            await http(`/runs/${runId}/gates/${gate.id}/events`, {
              method: "POST",
              body: JSON.stringify({ type: "merge" }),
            });
      }
      if (Date.now() > deadline)
        throw new Error(`runs still running: ${runIds.filter((r) => !statuses.has(r))}`);
      await sleep(100);
    }
    return statuses;
  }

  it("finishes 30 concurrent review runs on a small budget, showing queued lines, none waiting past maxWaitS", async () => {
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) runIds.push(await start(`a hello${i}() function in hello${i}.js`));
    const statuses = await finish(runIds, 240_000);
    expect([...statuses.values()]).toEqual(runIds.map(() => "done"));

    const feeds: RunFeedEvent[] = [];
    for (const runId of runIds) feeds.push(...(await events(runId)));
    const queued = feeds.filter((e): e is Extract<RunFeedEvent, { type: "queued" }> => e.type === "queued");
    const waiting = queued.filter((e) => e.position !== undefined);
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting[0]).toMatchObject({
      child: expect.stringMatching(/#(coder|reviewer)$/),
      reason: expect.stringMatching(/KV budget|tokens/),
    });
    const waits = queued.filter((e) => e.waitedMs !== undefined).map((e) => e.waitedMs!);
    expect(waits.length).toBeGreaterThan(0);
    for (const ms of waits) expect(ms).toBeLessThan(MAX_WAIT_S * 1000);
  }, 300_000);

  it("a run cancelled while its Turn waits for the working set ends cancelled", async () => {
    const first = await start("a slow() function in slow.js");
    const second = await start("a waiting() function in waiting.js");
    // Wait until the second run's Turn is queued, then cancel it.
    const deadline = Date.now() + 60_000;
    let queuedSeen = false;
    while (!queuedSeen && Date.now() < deadline) {
      const { body } = await http(`/runs/${second}`);
      if (body?.status !== "running") break;
      queuedSeen = (await eventsSoFar(second)).some((e) => e.type === "queued");
      if (!queuedSeen) await sleep(50);
    }
    expect(queuedSeen).toBe(true);
    const mine = async () =>
      (await stack.requests()).filter((r) => r.raw.includes("waiting() function")).length;
    const sentBefore = await mine();
    const cancelled = await http(`/runs/${second}/cancel`, { method: "POST", body: "{}" });
    expect(cancelled.status).toBe(200);
    const statuses = await finish([first, second], 60_000);
    expect(statuses.get(first)).toBe("done");
    expect(statuses.get(second)).toBe("cancelled");
    // The wait ended without a request: the queued request never reached the model.
    await sleep(1_000);
    expect(await mine()).toBe(sentBefore);
  }, 120_000);

  /** A live run's feed so far: the SSE read for a moment, then cut. */
  async function eventsSoFar(runId: string): Promise<RunFeedEvent[]> {
    const res = await fetch(`${stack.orchestratorUrl}/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${stack.instanceToken}` },
      signal: AbortSignal.timeout(300),
    }).catch(() => undefined);
    if (!res) return [];
    let text = "";
    try {
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
    } catch {
      // cut by the timeout: what was read so far is the feed so far
    }
    return text
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as RunFeedEvent);
  }
});
