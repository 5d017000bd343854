/**
 * Regression (issue 24 item 6): run starts that cannot be retried.
 * Root cause: `POST /workflows/:name/runs` had no idempotency key. Under load 34 starts answered
 * after the client's 30 s timeout and left orphan runs whose ids their client never learnt; a
 * client that retried made the run twice. Now (ADR-0282) an `Idempotency-Key` is reserved with
 * the run id before the run starts: a retry — even while the first start is still under way —
 * answers that run, 200 with its runId.
 * Real HTTP on loopback; a store whose first save takes 1.5 s stands in for the loaded box.
 */
import type { FastifyInstance } from "fastify";
import { afterEach, expect, it } from "vitest";
import { createMemoryStore, type RunStore } from "../../src/durability/store/run-store.js";
import { buildOrchestrator } from "../../src/index.js";
import { flow, INSTANCE_TOKEN, SANDBOX_KEY } from "../http/fixture.js";

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

/** An Orchestrator on loopback whose store holds each run's first save for `delayMs`. */
async function slowStart(delayMs: number): Promise<string> {
  const store: RunStore = createMemoryStore();
  const save = store.save.bind(store);
  const seen = new Set<string>();
  store.save = async (blob, ...rest) => {
    if (!seen.has(blob.runId)) {
      seen.add(blob.runId);
      await new Promise((r) => setTimeout(r, delayMs));
    }
    return save(blob, ...rest);
  };
  const app = await buildOrchestrator({
    workflows: new Map([["flow", flow]]),
    auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY },
    store,
  });
  apps.push(app);
  return app.listen({ host: "127.0.0.1", port: 0 });
}

function start(base: string, key: string | undefined, timeoutMs?: number) {
  return fetch(`${base}/workflows/flow/runs`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${INSTANCE_TOKEN}`,
      "content-type": "application/json",
      ...(key ? { "idempotency-key": key } : {}),
    },
    body: JSON.stringify({ input: { task: "t" } }),
    ...(timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
  });
}

async function runCount(base: string): Promise<number> {
  const res = await fetch(`${base}/runs`, { headers: { authorization: `Bearer ${INSTANCE_TOKEN}` } });
  return ((await res.json()) as unknown[]).length;
}

it("a timed-out start retried with its key makes one run, answered 200 with its runId", async () => {
  const base = await slowStart(1500);
  await expect(start(base, "start-0001", 200)).rejects.toThrow(/abort|timeout/i);
  const retried = await start(base, "start-0001");
  expect(retried.status).toBe(200);
  const { runId } = (await retried.json()) as { runId: string };
  expect(runId).toMatch(/\S/);
  const again = await start(base, "start-0001");
  expect([again.status, ((await again.json()) as { runId: string }).runId]).toEqual([200, runId]);
  expect(await runCount(base)).toBe(1);
  // A new key is a new run (201); the first is still the one its key names.
  const fresh = await start(base, "start-0002");
  expect(fresh.status).toBe(201);
  expect(await runCount(base)).toBe(2);
});

it("without a key (an older client) a retry starts another run, as before", async () => {
  const base = await slowStart(500);
  await expect(start(base, undefined, 100)).rejects.toThrow(/abort|timeout/i);
  expect((await start(base, undefined)).status).toBe(201);
  await new Promise((r) => setTimeout(r, 600));
  expect(await runCount(base)).toBe(2);
});

it("a key that cannot be one is refused 400 and starts nothing", async () => {
  const base = await slowStart(0);
  const bad = await start(base, "has space");
  expect([bad.status, ((await bad.json()) as { code: string }).code]).toEqual([
    400,
    "JR2_ERR_IDEMPOTENCY_KEY_INVALID",
  ]);
  expect(await runCount(base)).toBe(0);
});
