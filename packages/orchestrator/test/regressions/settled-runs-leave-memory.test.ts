/**
 * Regression (issue 16 item 2): every settled run stayed in the Orchestrator's memory for the
 * life of the process — ~11–13 KB per settled triage run after forced collections, 3,000 runs
 * took RSS from 148 to 245 MB. Root cause: the run host's `runs` map was never pruned, and
 * restore kept every settled blob in a second map (`stored`) besides. Fixed (ADR-0260): a run
 * leaves memory once its settled blob committed; `GET /runs`, `GET /runs/:id` and the feed read
 * it back from the store. The whole feed is kept for the 100 most recently settled runs; an
 * older run's feed is the one status event its blob tells (the loss until the run-history
 * issue makes the feed durable). No field case (C1–C8): found by the soak measurement.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStore, type RunStore } from "../../src/durability/store/run-store.js";
import { openSqliteStore } from "../../src/durability/store/sqlite.js";
import { buildOrchestrator, createRunHost, INSTANCE_CALLER, type RunHost } from "../../src/index.js";
import { SETTLED_FEEDS_KEPT } from "../../src/runs/settled-runs.js";
import { call, flow, INSTANCE_TOKEN, SANDBOX_KEY } from "../http/fixture.js";

const dirs: string[] = [];
/** The stores the host reads settled runs back from. */
const stores = {
  memory: () => createMemoryStore(),
  sqlite: () => {
    const dir = mkdtempSync(join(tmpdir(), "jr2-settled-"));
    dirs.push(dir);
    return openSqliteStore(dir);
  },
};

/** A store whose saves of a settled blob wait while `hold` is set (the final commit is slow). */
function slowFinalSaves(inner: RunStore) {
  let release: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  const store: RunStore = {
    ...inner,
    async save(blob, picks) {
      if (blob.status !== "running" && gate) await gate;
      return inner.save(blob, picks);
    },
  };
  return {
    store,
    hold() {
      gate = new Promise((resolve) => {
        release = resolve;
      });
    },
    release() {
      gate = undefined;
      release?.();
    },
  };
}

/** Waits (event-loop turns, bounded) until `check` holds. */
async function until(check: () => boolean, label: string): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!check()) throw new Error(`never reached: ${label}`);
}

/** Every answer a client can get about a run, over HTTP. */
async function answersAbout(app: FastifyInstance, runId: string) {
  const detail = await call(app, "GET", `/runs/${runId}`);
  const list = await call(app, "GET", "/runs");
  const feed = await app.inject({
    method: "GET",
    url: `/runs/${runId}/events`,
    headers: { authorization: `Bearer ${INSTANCE_TOKEN}` },
  });
  const resumed = await app.inject({
    method: "GET",
    url: `/runs/${runId}/events`,
    headers: { authorization: `Bearer ${INSTANCE_TOKEN}`, "last-event-id": "1" },
  });
  return {
    detail,
    summary: (list.body as Array<{ runId: string }>).find((r) => r.runId === runId),
    feed: feed.body,
    resumed: resumed.body,
  };
}

/** What a Gate event and a cancel answer about a settled run (never sent while its save is held). */
async function refusalsAbout(app: FastifyInstance, runId: string) {
  const gate = await call(app, "POST", `/runs/${runId}/gates/review_gate/events`, { type: "approve" });
  const cancel = await call(app, "POST", `/runs/${runId}/cancel`);
  return { gate, cancel };
}

/**
 * Brings `flow` to its Gate when `how` < 2 (a pick); returns how it then ends: approved (done),
 * cancelled at the Gate, or cancelled while working. The ending is a Gate event or a cancel,
 * whose feed events are appended before its save (a pick's wait for its save).
 */
async function toEnding(host: RunHost, runId: string, how: number): Promise<() => Promise<unknown>> {
  const iid = (await host.getRun(runId)).turns[0]!.iid;
  if (how < 2)
    await host.deliverPick(iid, INSTANCE_CALLER, {
      name: "finish",
      arguments: { summary: "s" },
      toolCallId: "f",
    });
  return how === 0
    ? () => host.sendGateEvent(runId, "review_gate", { type: "approve" })
    : () => host.cancelRun(runId);
}

describe.each(Object.keys(stores) as Array<keyof typeof stores>)(
  "settled runs leave the Orchestrator's memory (issue 16 item 2), %s store",
  (kind) => {
    let app: FastifyInstance | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    });

    it("after N settled runs the host holds none of them, and every answer about each is unchanged", async () => {
      let tick = Date.parse("2030-01-01T00:00:00.000Z");
      const clock = () => new Date(tick);
      const saves = slowFinalSaves(stores[kind]());
      const host = createRunHost({ workflows: new Map([["flow", flow]]), store: saves.store, clock });
      app = await buildOrchestrator({
        host,
        auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY },
      });
      const n = SETTLED_FEEDS_KEPT + 5;
      const before = new Map<string, Awaited<ReturnType<typeof answersAbout>>>();
      for (let i = 0; i < n; i++) {
        tick += 1000; // one time per run: the live view and the saved blob carry the same times
        const { runId } = await host.startRun("flow", { task: `report ${i}` });
        const end = await toEnding(host, runId, i % 3);
        // The final commit is held: the run has settled but is still in memory — today's answers.
        saves.hold();
        const ended = end();
        await until(() => !host.isLive(runId), "the run settled");
        expect(host.resident().runs).toBe(1);
        before.set(runId, await answersAbout(app, runId));
        saves.release();
        await ended;
        await until(() => host.resident().runs === 0, "the settled run left memory");
        expect(await answersAbout(app, runId)).toEqual(before.get(runId));
        const { status } = before.get(runId)!.detail.body;
        expect(await refusalsAbout(app, runId)).toEqual({
          gate: { status: 409, body: expect.objectContaining({ code: "JR2_ERR_RUN_NOT_LIVE", status }) },
          cancel: { status: 409, body: expect.objectContaining({ code: "JR2_ERR_RUN_NOT_LIVE", status }) },
        });
      }
      expect(host.resident()).toEqual({ runs: 0, settledFeeds: SETTLED_FEEDS_KEPT });
      const statuses = new Set([...before.values()].map((a) => a.detail.body.status));
      expect(statuses).toEqual(new Set(["done", "cancelled"]));
      const values = new Set([...before.values()].map((a) => JSON.stringify(a.detail.body.value)));
      expect(values.size).toBe(3);

      // Every run is still served, from the store; past the kept feeds only the final status.
      const runIds = [...before.keys()];
      for (const [index, runId] of runIds.entries()) {
        const now = await answersAbout(app, runId);
        const then = before.get(runId)!;
        expect(now.detail).toEqual(then.detail);
        expect(now.summary).toEqual(then.summary);
        if (index >= n - SETTLED_FEEDS_KEPT) expect(now.feed).toEqual(then.feed);
        else {
          expect(now.feed).toContain(`"status":"${then.detail.body.status}"`);
          expect(now.feed.match(/^event: /gm)).toHaveLength(1);
        }
      }
      const listed = await call(app, "GET", "/runs");
      expect(listed.body).toEqual(runIds.reverse().map((runId) => before.get(runId)!.summary));
    });

    it("a settled run restored from the store is not kept in memory either", async () => {
      const store = stores[kind]();
      const first = createRunHost({
        workflows: new Map([["flow", flow]]),
        store: { ...store, close: async () => {} },
      });
      const { runId } = await first.startRun("flow", { task: "t" });
      const live = await first.startRun("flow", { task: "still running" });
      await first.cancelRun(runId);
      const expected = await first.getRun(runId);
      await first.close();
      const second = createRunHost({ workflows: new Map([["flow", flow]]), store });
      await second.restore();
      expect(second.resident().runs).toBe(1);
      expect(await second.getRun(runId)).toMatchObject({ status: "cancelled", value: expected.value });
      expect((await second.listRuns()).map((r) => [r.runId, r.status])).toEqual(
        expect.arrayContaining([
          [runId, "cancelled"],
          [live.runId, "running"],
        ]),
      );
      await second.close();
    });
  },
);
