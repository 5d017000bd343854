/**
 * Issue 16 item 1 — a failed save must never end the process, nor let a pick be delivered twice.
 * Root cause: `persistence.ts` attached its chain cleanup with `void next.finally(...)`, whose
 * promise rejects with the save's error and had no handler: with the store full (SQLITE_FULL)
 * the Orchestrator died of an unhandled rejection. And the Machine takes a pick before its
 * save: when that save failed, the run kept the pick in memory with no stored answer, so the
 * Harness's re-sent `toolCallId` was delivered a second time.
 * The store fills here through `PRAGMA max_page_count` (no root needed); the built-binary test
 * on a real tmpfs is test/integration/disk-full.test.ts. Field case: none (found by the
 * adversarial pass of issue 16).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRunPersistence } from "../../src/durability/persistence.js";
import { createMemoryStore, type RunStore } from "../../src/durability/store/run-store.js";
import { openSqliteStore, STORE_FILE } from "../../src/durability/store/sqlite.js";
import {
  buildOrchestrator,
  createHarnessTurnDriver,
  createLogger,
  createRunHost,
  INSTANCE_CALLER,
} from "../../src/index.js";
import { LiveRun } from "../../src/runs/live-run.js";
import type { HarnessClient } from "../../src/turns/harness-client.js";
import { machine } from "./fixtures/notes/notes.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), "jr2-full-"));
  dirs.push(dir);
  return dir;
}

/** A logger whose lines the test reads. */
function capturedLog() {
  const lines: Array<{ msg: string; runId?: string }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split("\n")) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: pino({ level: "info" }, stream), lines };
}

const workflows = new Map([["notes", machine]]);
const big = "n".repeat(64 * 1024); // the note's save needs pages the full store does not have

async function finalOf(host: ReturnType<typeof createRunHost>, runId: string) {
  const { status, value, context } = await host.getRun(runId);
  return { status, value, context };
}

/** Plays the run to its end uninterrupted: one note, then finish. */
async function uninterrupted() {
  const host = createRunHost({ workflows, store: openSqliteStore(tempDir()) });
  const { runId } = await host.startRun("notes", {});
  const iid = (await host.getRun(runId)).turns[0]!.iid;
  await host.deliverPick(iid, INSTANCE_CALLER, { name: "note", arguments: { text: big }, toolCallId: "c1" });
  await host.deliverPick(iid, INSTANCE_CALLER, { name: "finish", arguments: {}, toolCallId: "c2" });
  const final = await finalOf(host, runId);
  await host.close();
  return final;
}

describe("a full store (issue 16 item 1, PRAGMA max_page_count)", () => {
  it("answers the in-state pick 503 STORE_FAILING, freezes the run, and after space returns the re-sent pick is taken once", async () => {
    const expected = await uninterrupted();
    const store = openSqliteStore(tempDir());
    const { log, lines } = capturedLog();
    const host = createRunHost({ workflows, store, logger: log, saveRetry: { minMs: 10, maxMs: 50 } });
    const { runId } = await host.startRun("notes", {});
    const iid = (await host.getRun(runId)).turns[0]!.iid;

    // The disk fills: not one page more.
    store.db.pragma(`max_page_count = ${store.db.pragma("page_count", { simple: true })}`);
    const pick = { name: "note", arguments: { text: big }, toolCallId: "c1" };
    const refused = await host.deliverPick(iid, INSTANCE_CALLER, pick).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      code: "JR2_ERR_STORE_FAILING",
      statusCode: 503,
      fields: { retryAfter: 2 },
    });
    expect(String((refused as Error).message)).toMatch(/full/);
    expect(host.storeHealth()).toMatchObject({ store: "failing", frozenRuns: 1 });
    // The Harness re-sends while the store is still full: the frozen run takes nothing.
    await expect(host.deliverPick(iid, INSTANCE_CALLER, pick)).rejects.toMatchObject({
      code: "JR2_ERR_STORE_FAILING",
    });
    expect(host.registrations.ofRun(runId)).toEqual([]);

    // Space returns: the run is reloaded from its last committed save, before the note.
    store.db.pragma("max_page_count = 1073741823");
    await vi.waitFor(() => expect(host.storeHealth()).toMatchObject({ store: "ok", frozenRuns: 0 }), {
      timeout: 10_000,
    });
    expect((await host.getRun(runId)).context).toEqual({ notes: [] });
    const iidAgain = (await host.getRun(runId)).turns[0]!.iid;
    expect(iidAgain).toBe(iid);
    const answer = await host.deliverPick(iidAgain, INSTANCE_CALLER, pick);
    expect(answer).toMatchObject({ delivered: true, moved: true, turnComplete: false });
    // Re-sent once more (the answer was lost in transit): the stored answer, not a second note.
    expect(await host.deliverPick(iidAgain, INSTANCE_CALLER, pick)).toEqual(answer);
    await host.deliverPick(iidAgain, INSTANCE_CALLER, { name: "finish", arguments: {}, toolCallId: "c2" });
    expect(await finalOf(host, runId)).toEqual(expected);
    expect(lines.some((l) => l.msg.includes("the run is frozen"))).toBe(true);
    await host.close();
  });
});

describe("a busy store (issue 16 item 1)", () => {
  it("another writer holding the lock past busy_timeout: the pick answers 503, the run is reloaded once the lock is gone", async () => {
    const dir = tempDir();
    const store = openSqliteStore(dir);
    const host = createRunHost({ workflows, store, saveRetry: { minMs: 10, maxMs: 50 } });
    const { runId } = await host.startRun("notes", {});
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    const other = new Database(join(dir, STORE_FILE));
    other.exec("BEGIN IMMEDIATE"); // holds the write lock (a second jr2 on the same dir, a backup tool)
    const pick = { name: "note", arguments: { text: "busy" }, toolCallId: "c1" };
    await expect(host.deliverPick(iid, INSTANCE_CALLER, pick)).rejects.toMatchObject({
      code: "JR2_ERR_STORE_FAILING",
      fields: { detail: "database is locked" },
    });
    other.exec("ROLLBACK");
    other.close();
    await vi.waitFor(() => expect(host.storeHealth()).toMatchObject({ store: "ok", frozenRuns: 0 }), {
      timeout: 20_000,
    });
    expect(await host.deliverPick(iid, INSTANCE_CALLER, pick)).toMatchObject({
      delivered: true,
      moved: true,
    });
    expect((await host.getRun(runId)).context).toEqual({ notes: ["busy"] });
    await host.close();
  }, 30_000);
});

/** A store whose writes fail while `full` is set, as a full disk does (better-sqlite3's error). */
function fullableStore(inner: RunStore = createMemoryStore()) {
  const state = { full: false, attempts: 0 };
  const fail = () => {
    state.attempts++;
    throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
  };
  const store: RunStore = {
    ...inner,
    save: async (...args) => (state.full ? fail() : inner.save(...args)),
    recordUsage: async (...args) => (state.full ? fail() : inner.recordUsage(...args)),
  };
  return { store, state, inner };
}

describe("failing saves (issue 16 item 1)", () => {
  it("a background save that fails never ends the process: it retries with backoff, logs once per run per minute, and commits once the store takes writes", async () => {
    const { store, state, inner } = fullableStore();
    const { log, lines } = capturedLog();
    const clock = { ms: Date.parse("2026-12-01T09:00:00Z") };
    const persistence = createRunPersistence(store, log, () => new Date(clock.ms), { minMs: 5, maxMs: 20 });
    const run = new LiveRun({
      runId: "run-bg",
      workflow: "notes",
      machine,
      input: {},
      fingerprint: "fp",
      log,
      hooks: {
        startTurn: () => () => {},
        settled() {},
        changed: (r) => persistence.changed(r),
        now: () => new Date(),
      },
    });
    state.full = true;
    run.start(); // its first snapshot is saved in the background — and fails
    await vi.waitFor(() => expect(state.attempts).toBeGreaterThanOrEqual(5), { timeout: 10_000 });
    const logged = () => lines.filter((l) => l.msg === "saving the run failed; retrying with backoff").length;
    expect(logged()).toBe(1); // five failures within the minute: one line
    expect(persistence.storeState()).toMatchObject({ failing: true, error: "database or disk is full" });
    clock.ms += 61_000;
    const seen = state.attempts;
    await vi.waitFor(() => expect(state.attempts).toBeGreaterThan(seen), { timeout: 10_000 });
    expect(logged()).toBe(2); // a minute later: one more
    state.full = false;
    await vi.waitFor(() => expect(persistence.storeState().failing).toBe(false), { timeout: 10_000 });
    expect((await inner.load("run-bg"))?.snapshot).toMatchObject({ value: "writing" });
    await persistence.close();
  });

  it("usage read while the store refuses writes is kept and written once it takes them (never twice)", async () => {
    const { store, state, inner } = fullableStore();
    const { log } = capturedLog();
    const persistence = createRunPersistence(store, log, () => new Date(), { minMs: 5, maxMs: 20 });
    const run = new LiveRun({
      runId: "run-u",
      workflow: "notes",
      machine,
      input: {},
      fingerprint: "fp",
      log,
      hooks: { startTurn: () => () => {}, settled() {}, now: () => new Date() },
    });
    const record = {
      iid: "run-u/writer",
      submissionId: "s1",
      position: "4",
      promptTokens: 10,
      cachedTokens: 8,
      completionTokens: 2,
    };
    state.full = true;
    expect(persistence.recordUsage(run, record)).toBe(true);
    expect(persistence.recordUsage(run, { ...record })).toBe(false); // the same stream position
    await expect(persistence.save(run)).rejects.toThrow(/full/); // carried by a save that fails
    await vi.waitFor(() => expect(state.attempts).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
    state.full = false;
    await vi.waitFor(async () => expect(await inner.usage("run-u")).toEqual([record]), { timeout: 10_000 });
    await persistence.close();
  });

  it("a store that cannot be read answers a pick 503, not 500, and takes nothing", async () => {
    const { store } = fullableStore();
    let failReads = false;
    const reading: RunStore = {
      ...store,
      pickAnswer: async (...args) => {
        if (failReads) throw Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_READ" });
        return store.pickAnswer(...args);
      },
    };
    const host = createRunHost({ workflows, store: reading });
    const { runId } = await host.startRun("notes", {});
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    failReads = true;
    const pick = { name: "note", arguments: { text: "x" }, toolCallId: "c1" };
    await expect(host.deliverPick(iid, INSTANCE_CALLER, pick)).rejects.toMatchObject({
      code: "JR2_ERR_STORE_FAILING",
      fields: { detail: "disk I/O error" },
    });
    expect((await host.getRun(runId)).context).toEqual({ notes: [] });
    failReads = false;
    expect(await host.deliverPick(iid, INSTANCE_CALLER, pick)).toMatchObject({ delivered: true });
    await host.close();
  });

  it("a cancel whose save fails answers 503 and leaves the run as last committed", async () => {
    const { store, state, inner } = fullableStore();
    const host = createRunHost({ workflows, store, saveRetry: { minMs: 5, maxMs: 20 } });
    const { runId } = await host.startRun("notes", {});
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    state.full = true;
    await expect(host.cancelRun(runId)).rejects.toMatchObject({ code: "JR2_ERR_STORE_FAILING" });
    expect(() => host.readSurface(iid, INSTANCE_CALLER)).toThrow(/not accepting writes/);
    // A run whose very first save fails is answered 503 and never appears.
    await expect(host.startRun("notes", {})).rejects.toMatchObject({ code: "JR2_ERR_STORE_FAILING" });
    state.full = false;
    await vi.waitFor(() => expect(host.storeHealth()).toMatchObject({ store: "ok", frozenRuns: 0 }), {
      timeout: 10_000,
    });
    expect((await inner.load(runId))?.status).toBe("running");
    expect((await host.getRun(runId)).status).toBe("running");
    expect((await host.listRuns()).map((r) => r.runId)).toEqual([runId]);
    expect(host.readSurface(iid, INSTANCE_CALLER).iid).toBe(iid);
    await host.close();
  });
});

describe("a failing log write (issue 16 item 1)", () => {
  it("loses the line, never the process: the logger takes its stream's error", async () => {
    let writes = 0;
    const sink = new Writable({
      write(_chunk, _enc, done) {
        writes++;
        done(Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }));
      },
    });
    const logger = createLogger({ destination: sink });
    logger.error("saving the run failed");
    // The stream's error event fires on a later tick: without a listener it is an uncaught exception.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(writes).toBe(1);
  });
});

describe("the HTTP face of a failing store (issue 16 item 1, ADR-0253)", () => {
  it("a pick answers 503 STORE_FAILING with Retry-After; /healthz answers 200 with store failing, then ok", async () => {
    const { store, state } = fullableStore();
    const token = "store-failing-token-0123456789abcdef";
    const app = await buildOrchestrator({ workflows, auth: { instanceToken: token }, store });
    const headers = { authorization: `Bearer ${token}` };
    const started = await app.inject({
      method: "POST",
      url: "/workflows/notes/runs",
      headers,
      payload: { input: {} },
    });
    const { runId } = started.json() as { runId: string };
    const run = (await app.inject({ method: "GET", url: `/runs/${runId}`, headers })).json();
    const picks = `/agents/${encodeURIComponent(run.turns[0].iid)}/picks`;
    state.full = true;
    const pick = { name: "note", arguments: { text: "x" }, toolCallId: "c1" };
    const refused = await app.inject({ method: "POST", url: picks, headers, payload: pick });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers["retry-after"]).toBe("2");
    expect(refused.json()).toMatchObject({ code: "JR2_ERR_STORE_FAILING", retryAfter: 2 });
    const health = await app.inject({ method: "GET", url: "/healthz" });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ ok: true, store: "failing" });
    state.full = false;
    await vi.waitFor(
      async () => {
        const again = await app.inject({ method: "GET", url: "/healthz" });
        expect(again.json()).toMatchObject({ store: "ok" });
      },
      { timeout: 10_000 },
    );
    const taken = await app.inject({ method: "POST", url: picks, headers, payload: pick });
    expect(taken.json()).toMatchObject({ delivered: true, moved: true, turnComplete: false });
    await app.close();
  });
});

describe("a ledger write that fails (issue 16 item 1, ADR-0253)", () => {
  it("freezes the run: its Turn stops without an abort, nothing more leaves; reloaded, the Turn is admitted again", async () => {
    const { store, state, inner } = fullableStore();
    const admissions: string[] = [];
    const aborts: string[] = [];
    let answerFirst = () => {};
    const firstAnswered = new Promise<void>((resolve) => {
      answerFirst = resolve;
    });
    const client: HarnessClient = {
      endpoint: { url: "http://127.0.0.1:1", token: "t" },
      async admit(iid) {
        admissions.push(iid);
        if (admissions.length === 1) {
          await firstAnswered;
          state.full = true; // the disk fills while the admission is out
        }
        return {
          kind: "admitted",
          admission: { submissionId: `s${admissions.length}`, offset: "0", streamUrl: `/c/${iid}` },
        };
      },
      async read(_iid, _offset, _wait, signal) {
        await new Promise<void>((resolve) =>
          signal?.addEventListener("abort", () => resolve(), { once: true }),
        );
        return { kind: "transport", error: "aborted" };
      },
      async abort(iid) {
        aborts.push(iid);
        return { ok: true, aborted: true };
      },
    };
    const host = createRunHost({
      workflows,
      store,
      turnDriver: createHarnessTurnDriver({ harnessToken: "t", client: () => client }),
      placement: {
        instanceHarnessUrl: "http://127.0.0.1:1",
        workRoot: "/work",
        allowExplicitEndpoints: false,
      },
      saveRetry: { minMs: 5, maxMs: 20 },
    });
    const { runId } = await host.startRun("notes", {});
    answerFirst();
    await vi.waitFor(() => expect(host.storeHealth().frozenRuns).toBe(1), { timeout: 10_000 });
    expect(host.registrations.ofRun(runId)).toEqual([]);
    expect(aborts).toEqual([]);
    expect(admissions).toHaveLength(1);
    expect(Object.keys((await inner.load(runId))!.ledger)).toEqual([]);

    state.full = false;
    await vi.waitFor(() => expect(admissions).toHaveLength(2), { timeout: 10_000 });
    await vi.waitFor(async () => expect(Object.keys((await inner.load(runId))!.ledger)).toHaveLength(1), {
      timeout: 10_000,
    });
    expect(host.storeHealth()).toMatchObject({ store: "ok", frozenRuns: 0 });
    expect((await host.getRun(runId)).turns).toHaveLength(1);
    expect(aborts).toEqual([]);
    await host.close();
  });
});
