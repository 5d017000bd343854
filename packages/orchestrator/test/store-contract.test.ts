/**
 * The store contract (SPEC §8, ADR-0280): the SAME cases against the memory store, SQLite (a
 * temp dir) and PostgreSQL (a fresh database on the test cluster; skipped without
 * JR2_TEST_PG_URL, failed under CI=true). What one store does, every store does.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunFeedEvent } from "@jr2/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresRunStore } from "../src/durability/store/postgres.js";
import {
  createMemoryStore,
  DamagedRunError,
  type RunBlob,
  type RunStore,
  type StoreOptions,
} from "../src/durability/store/run-store.js";
import { openSqliteStore, type SqliteRunStore } from "../src/durability/store/sqlite.js";
import type { TranscriptRow, TurnRecord } from "../src/durability/transcript-rows.js";
import type { UsageRecord } from "../src/durability/usage-totals.js";
import { describePg, freshPgDatabase } from "./pg.js";

/** One store under test: how to open a fresh, empty one, and (not memory) how to damage a row. */
interface Subject {
  open(options?: StoreOptions): Promise<RunStore>;
  damage?(store: RunStore, runId: string): Promise<void>;
}

function blob(runId: string, patch: Partial<RunBlob> = {}): RunBlob {
  return {
    runId,
    workflow: "review",
    machineFingerprint: "fp1",
    status: "running",
    snapshot: { value: "implement", context: { n: 1 } },
    input: { task: "x" },
    ledger: { [`${runId}/coder`]: { turnId: "t1", submissionId: "s1", offset: "3", streamUrl: "/x" } },
    epochs: {},
    timers: [],
    usage: { promptTokens: 0, cachedTokens: 0, completionTokens: 0 },
    createdAt: "2026-11-30T00:00:00.000Z",
    updatedAt: "2026-11-30T00:00:00.000Z",
    ...patch,
  };
}

const settled = (runId: string, updatedAt: string, patch: Partial<RunBlob> = {}) =>
  blob(runId, { status: "done", outcome: "succeeded", snapshot: { value: "finished" }, updatedAt, ...patch });

const answer = { delivered: true, moved: true, turnComplete: true, allowed: [] };

const event = (seq: number, value: unknown = `s${seq}`): RunFeedEvent => ({
  seq,
  at: `2026-11-30T00:00:0${seq % 10}.000Z`,
  type: "status",
  status: "running",
  value,
});

const usageRecord = (position: string, patch: Partial<UsageRecord> = {}): UsageRecord => ({
  iid: "r/coder",
  submissionId: "s1",
  position,
  promptTokens: 10,
  cachedTokens: 4,
  completionTokens: null,
  ...patch,
});

const row = (position: string, turnId: string, patch: Partial<TranscriptRow> = {}): TranscriptRow => ({
  iid: "r/coder",
  submissionId: "s1",
  position,
  turnId,
  at: "2026-11-30T00:00:00.000Z",
  entry: { kind: "message", role: "assistant", part: "answer", text: `text ${position}`, json: "{}" },
  ...patch,
});

const turn = (turnId: string, startedAt: string, patch: Partial<TurnRecord> = {}): TurnRecord => ({
  turnId,
  agent: "coder",
  state: "implement",
  iid: "r/coder",
  startedAt,
  endedAt: null,
  outcome: "running",
  pick: null,
  ...patch,
});

/** The contract: every case against the store `subject` opens. */
function contract(subject: Subject) {
  it("saves a blob and loads it back byte for byte (unicode, escapes, key order)", async () => {
    const store = await subject.open();
    const odd = blob("r1", {
      input: {
        z: 1,
        a: 'é — 🚀 \u2028 \u0000 \ud800 "q" \\',
        big: 1e21,
        neg: -3.5,
        nested: [{ b: null, a: [] }],
      },
    });
    await store.save(odd);
    expect(JSON.stringify(await store.load("r1"))).toBe(JSON.stringify(odd));
    expect(await store.load("missing")).toBeUndefined();
    await store.close();
  });

  it("keeps pick answers once by (iid, turnId, toolCallId); without a turnId the newest answer of any Turn", async () => {
    const store = await subject.open();
    const pick = (turnId: string | null, scope: string) => ({
      iid: "r1/coder",
      turnId,
      toolCallId: "call_1",
      scope,
      answer,
    });
    await store.save(blob("r1"), [pick("t1", "instance")]);
    await store.save(blob("r1"), [pick("t1", "other"), pick("t2", "sandbox:a")]);
    expect(await store.pickAnswer("r1", { iid: "r1/coder", turnId: "t1", toolCallId: "call_1" })).toEqual(
      pick("t1", "instance"),
    );
    expect(await store.pickAnswer("r1", { iid: "r1/coder", toolCallId: "call_1" })).toEqual(
      pick("t2", "sandbox:a"),
    );
    expect(
      await store.pickAnswer("r1", { iid: "r1/coder", turnId: "t3", toolCallId: "call_1" }),
    ).toBeUndefined();
    expect(await store.pickAnswer("r2", { iid: "r1/coder", toolCallId: "call_1" })).toBeUndefined();
    await store.save(blob("r3"), [{ ...pick(null, "instance"), iid: "r3/coder" }]);
    expect(await store.pickAnswer("r3", { iid: "r3/coder", toolCallId: "call_1" })).toEqual({
      ...pick(null, "instance"),
      iid: "r3/coder",
    });
    await store.close();
  });

  it("records usage once by (iid, submissionId, position), in recording order", async () => {
    const store = await subject.open();
    await store.save(blob("r1"), [], [usageRecord("1", { finishReason: "stop", turnId: "t1" })]);
    await store.recordUsage("r1", [
      usageRecord("1", { promptTokens: 999 }),
      usageRecord("0"),
      usageRecord("2"),
    ]);
    await store.recordUsage("r1", [usageRecord("0", { promptTokens: 5 })]);
    expect(await store.usage("r1")).toEqual([
      usageRecord("1", { finishReason: "stop", turnId: "t1" }),
      usageRecord("0"),
      usageRecord("2"),
    ]);
    expect(await store.usage("none")).toEqual([]);
    await store.close();
  });

  it("keeps events once by seq, pages them in seq order and knows the last seq", async () => {
    const store = await subject.open();
    expect(await store.lastEventSeq("r1")).toBeUndefined();
    await store.save(blob("r1"), [], [], [event(0), event(1)]);
    await store.appendEvents("r1", [event(3), event(2), event(1, "again")]);
    await store.appendEvents("r1", []);
    expect(await store.events("r1", 0, 100)).toEqual([event(0), event(1), event(2), event(3)]);
    expect(await store.events("r1", 1, 2)).toEqual([event(1), event(2)]);
    expect(await store.events("r1", 4, 10)).toEqual([]);
    expect(await store.events("r1", 0, 0)).toEqual([]);
    expect(await store.lastEventSeq("r1")).toBe(3);
    await store.appendEvents("never-saved", [event(7)]);
    expect(await store.lastEventSeq("never-saved")).toBe(7);
    await store.close();
  });

  it("records transcripts once by key and Turn records by turnId, keeping their place", async () => {
    const store = await subject.open();
    const prefix = row("0", "t1", { entry: { kind: "prefix", system: "sys", toolsJson: "[]" } });
    await store.recordTranscript("r1", [prefix, row("1", "t1"), row("2", "t2")]);
    await store.recordTranscript("r1", [
      row("1", "t1", { at: "changed" }),
      row("3", "t1", { capped: { text: 70000 } }),
    ]);
    expect(await store.transcript("r1", "t1")).toEqual([
      prefix,
      row("1", "t1"),
      row("3", "t1", { capped: { text: 70000 } }),
    ]);
    expect(await store.prefixes("r1", "r1/coder")).toEqual([]);
    expect(await store.prefixes("r1", "r/coder")).toEqual([prefix]);
    expect(await store.transcriptKeys("r1")).toEqual(
      ["0", "1", "2", "3"].map((p) => JSON.stringify(["r/coder", "s1", p])),
    );
    await store.recordTurns("r1", [
      turn("t2", "2026-11-30T00:00:05.000Z"),
      turn("t1", "2026-11-30T00:00:01.000Z"),
    ]);
    await store.recordTurns("r1", [turn("t3", "2026-11-30T00:00:05.000Z")]);
    await store.recordTurns("r1", [
      turn("t2", "2026-11-30T00:00:05.000Z", { outcome: "picked", endedAt: "x" }),
    ]);
    expect((await store.turns("r1")).map((t) => [t.turnId, t.outcome])).toEqual([
      ["t1", "running"],
      ["t2", "picked"],
      ["t3", "running"],
    ]);
    expect(await store.turns("none")).toEqual([]);
    await store.close();
  });

  it("keeps every version of a live run and folds a settled one: step versions dropped, then versionsKept", async () => {
    const store = await subject.open({ versionsKept: 3 });
    const timer = (seq: number): RunFeedEvent => ({
      seq,
      at: "2026-11-30T00:00:00.000Z",
      type: "timer",
      after: "t",
      value: "x",
    });
    for (let i = 0; i < 5; i++)
      await store.save(
        blob("r1", { updatedAt: `2026-11-30T00:00:0${i}.000Z` }),
        [],
        [],
        i > 0 && i < 4 ? [timer(i)] : [],
      );
    expect((await store.versions("r1")).map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
    expect((await store.versions("r1"))[0]?.cause).toEqual({ kind: "start" });
    const last = settled("r1", "2026-11-30T00:00:09.000Z");
    await store.save(last);
    const kept = await store.versions("r1");
    expect(kept.map((v) => [v.version, v.status])).toEqual([
      [3, "running"],
      [4, "running"],
      [6, "done"],
    ]);
    expect(kept[2]).toMatchObject({
      at: last.updatedAt,
      value: "finished",
      cause: { kind: "settled", status: "done" },
    });
    expect(await store.version("r1", 1)).toBeUndefined();
    expect((await store.version("r1", 6))?.blob).toEqual(last);
    expect(await store.versions("none")).toEqual([]);
    await store.close();
  });

  it("lists runs newest first (updatedAt, then runId), filtered and paged", async () => {
    const store = await subject.open();
    await store.save(blob("a", { updatedAt: "2026-11-30T00:00:01.000Z" }));
    await store.save(settled("b", "2026-11-30T00:00:02.000Z"));
    await store.save(
      settled("c", "2026-11-30T00:00:02.000Z", { status: "faulted", outcome: "faulted", workflow: "other" }),
    );
    await store.save(blob("B", { updatedAt: "2026-11-30T00:00:02.000Z", workflow: "other" }));
    await store.save(settled("d", "2026-11-30T00:00:03.000Z", { status: "cancelled", outcome: undefined }));
    const ids = async (filter?: Parameters<RunStore["list"]>[0]) =>
      (await store.list(filter)).map((r) => r.runId);
    expect(await ids()).toEqual(["d", "c", "b", "B", "a"]);
    expect(await ids({ status: "running" })).toEqual(["B", "a"]);
    expect(await ids({ workflow: "other" })).toEqual(["c", "B"]);
    expect(await ids({ outcome: "cancelled" })).toEqual(["d"]);
    expect(await ids({ limit: 2 })).toEqual(["d", "c"]);
    expect(await ids({ limit: 2, after: { updatedAt: "2026-11-30T00:00:02.000Z", runId: "c" } })).toEqual([
      "b",
      "B",
    ]);
    expect(await ids({ after: { updatedAt: "2026-11-30T00:00:02.000Z", runId: "B" } })).toEqual(["a"]);
    expect(await ids({ limit: 0 })).toEqual([]);
    const [d, c] = await store.list({ limit: 2 });
    expect(d).toEqual({
      runId: "d",
      workflow: "review",
      status: "cancelled",
      updatedAt: "2026-11-30T00:00:03.000Z",
      outcome: "cancelled",
      finalState: "finished",
    });
    expect(c).toMatchObject({ outcome: "faulted", finalState: "finished" });
    expect((await store.list({ status: "running" }))[0]).toEqual({
      runId: "B",
      workflow: "other",
      status: "running",
      updatedAt: "2026-11-30T00:00:02.000Z",
    });
    await store.close();
  });

  it("prunes the log, transcripts, Turns and versions of settled runs updated before the cut only", async () => {
    const store = await subject.open();
    const fill = async (runId: string) => {
      await store.appendEvents(runId, [event(0), event(1)]);
      await store.recordTranscript(runId, [row("0", "t1")]);
      await store.recordTurns(runId, [turn("t1", "2026-11-30T00:00:00.000Z")]);
    };
    await store.save(settled("old", "2026-11-01T00:00:00.000Z"));
    await store.save(blob("live", { updatedAt: "2026-11-01T00:00:00.000Z" }));
    await store.save(blob("drift", { status: "drifted", updatedAt: "2026-11-01T00:00:00.000Z" }));
    await store.save(settled("new", "2026-11-29T00:00:00.000Z"));
    for (const id of ["old", "live", "drift", "new"]) await fill(id);
    // old: 2 events + 1 transcript row + 1 Turn + 1 version.
    expect(await store.pruneEvents("2026-11-15T00:00:00.000Z")).toBe(5);
    expect(await store.events("old", 0, 10)).toEqual([]);
    expect(await store.transcript("old", "t1")).toEqual([]);
    expect(await store.turns("old")).toEqual([]);
    expect(await store.versions("old")).toEqual([]);
    for (const id of ["live", "drift", "new"]) {
      expect(await store.events(id, 0, 10)).toHaveLength(2);
      expect(await store.turns(id)).toHaveLength(1);
      expect(await store.versions(id)).toHaveLength(1);
    }
    expect(await store.load("old")).toBeDefined();
    await store.close();
  });

  it("returns only running runs as live", async () => {
    const store = await subject.open();
    await store.save(blob("r1"));
    await store.save(blob("r2", { status: "drifted" }));
    await store.save(settled("r3", "2026-11-30T00:00:01.000Z"));
    await store.save(blob("r4"));
    expect((await store.live()).map((b) => b.runId).sort()).toEqual(["r1", "r4"]);
    expect((await store.live()).find((b) => b.runId === "r1")).toEqual(blob("r1"));
    await store.close();
  });

  it.skipIf(!subject.damage)(
    "says which run is damaged; live() leaves it out, the others still read",
    async () => {
      const store = await subject.open();
      await store.save(blob("good"));
      await store.save(blob("bad"));
      await subject.damage?.(store, "bad");
      await expect(store.load("bad")).rejects.toThrow(DamagedRunError);
      await expect(store.load("bad")).rejects.toThrow(/run `bad`/);
      expect((await store.live()).map((b) => b.runId)).toEqual(["good"]);
      expect(await store.load("good")).toEqual(blob("good"));
      await store.close();
    },
  );

  it("commits nothing of a save when a part of it cannot be stored", async () => {
    const store = await subject.open();
    const cyclic: Record<string, unknown> = { ...event(0) };
    cyclic.self = cyclic;
    await expect(
      store.save(
        blob("r1"),
        [{ iid: "r1/coder", turnId: "t1", toolCallId: "c", scope: "instance", answer }],
        [usageRecord("0")],
        [event(1), cyclic as unknown as RunFeedEvent],
      ),
    ).rejects.toThrow();
    expect(await store.load("r1")).toBeUndefined();
    expect(await store.pickAnswer("r1", { iid: "r1/coder", toolCallId: "c" })).toBeUndefined();
    expect(await store.usage("r1")).toEqual([]);
    expect(await store.lastEventSeq("r1")).toBeUndefined();
    expect(await store.versions("r1")).toEqual([]);
    expect(await store.list()).toEqual([]);
    // The store still works after the failed save.
    await store.save(blob("r1"));
    expect(await store.load("r1")).toEqual(blob("r1"));
    await store.close();
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("the memory store keeps the store contract (§8)", () => {
  contract({ open: async (options) => createMemoryStore(options) });
});

describe("the SQLite store keeps the store contract (§8)", () => {
  contract({
    async open(options) {
      const dir = mkdtempSync(join(tmpdir(), "jr2-contract-"));
      dirs.push(dir);
      return openSqliteStore(dir, options);
    },
    async damage(store, runId) {
      (store as SqliteRunStore).db.prepare("UPDATE runs SET blob = '{not json' WHERE run_id = ?").run(runId);
    },
  });
});

describePg("the PostgreSQL store keeps the store contract (§8, ADR-0280)", () => {
  let db: Awaited<ReturnType<typeof freshPgDatabase>>;
  beforeAll(async () => {
    db = await freshPgDatabase("jr2_contract");
  });
  afterAll(async () => {
    await db?.drop();
  });
  contract({
    async open(options) {
      const store = await openPostgresStore(db.url, {
        ...options,
        instanceId: "contract",
        advertiseUrl: "http://127.0.0.1:1",
        poolMax: 3,
      });
      // Each case starts on an empty database (one database per suite).
      await store.pool.query(
        "TRUNCATE runs, pick_answers, usage_events, run_events, transcript_entries, turns, run_versions, run_leases",
      );
      return store;
    },
    async damage(store, runId) {
      await (store as PostgresRunStore).pool.query("UPDATE runs SET blob = '{not json' WHERE run_id = $1", [
        runId,
      ]);
    },
  });
});
