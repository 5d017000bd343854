/**
 * Versions stored compactly (issue 22 §4, ADR-0277) — one contract, SQLite and PostgreSQL
 * (skipped without JR2_TEST_PG_URL, failed under CI=true): a real `review` run's saves (played
 * by hand through a host on a memory store, every save captured as it was written) are saved
 * again into the store under test; once it settles and is folded, every kept version reads
 * back byte for byte as it was saved, a fork from a compacted version restores the snapshot a
 * fork from the uncompacted one does, rows written before the migration read as they are, and
 * the reserved `workspace` survives the fold. The settled run's `run_versions` bytes are ≤ 8 KB.
 */
import type { RunFeedEvent, VersionCause } from "@jr2/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresRunStore } from "../../src/durability/store/postgres.js";
import { createMemoryStore, type RunBlob, type RunStore } from "../../src/durability/store/run-store.js";
import { openSqliteStore, type SqliteRunStore } from "../../src/durability/store/sqlite.js";
import { createRunHost, INSTANCE_CALLER } from "../../src/index.js";
import { forkBlob } from "../../src/runs/fork-snapshot.js";
import { machine as review } from "../fixtures/plain-review/review.js";
import { describePg, freshPgDatabase } from "../pg.js";
import { sqliteDir } from "./store-fixture.js";

/** One save as the host wrote it: the blob's JSON text, its events and explicit cause. */
interface CapturedSave {
  text: string;
  events: RunFeedEvent[];
  cause: VersionCause | undefined;
}

/** Plays one `review` run to `merged` by hand and returns every save of it, in order. */
async function playReview(): Promise<{ runId: string; saves: CapturedSave[] }> {
  const inner = createMemoryStore();
  const saves: CapturedSave[] = [];
  const store: RunStore = {
    ...inner,
    save(blob, picks, usage, events = [], cause, when) {
      saves.push({ text: JSON.stringify(blob), events: structuredClone([...events]), cause });
      return inner.save(blob, picks, usage, events, cause, when);
    },
  };
  const host = createRunHost({ workflows: new Map([["review", review]]), store });
  const { runId } = await host.startRun("review", { task: "a hello() function" });
  const pick = async (agent: string, name: string, args: unknown) => {
    const turn = (await host.getRun(runId)).turns.find((t) => t.agent === agent)!;
    const toolCallId = `${name}-${saves.length}`;
    await host.deliverPick(turn.iid, INSTANCE_CALLER, {
      name,
      arguments: args,
      toolCallId,
      ...(turn.turnId ? { turnId: turn.turnId } : {}),
    });
  };
  await pick("coder", "finish", { summary: "wrote hello()" });
  await pick("reviewer", "request_changes", { comments: ["add a test"] });
  await pick("coder", "finish", { summary: "added the test" });
  await pick("reviewer", "approve", { summary: "good" });
  await host.sendGateEvent(runId, "merge_gate", { type: "merge" });
  await host.close();
  return { runId, saves: saves.filter((s) => (JSON.parse(s.text) as RunBlob).runId === runId) };
}

const mints = () => {
  let n = 0;
  return { hex: () => `hex${++n}`, turnId: () => `turn-${++n}` };
};

/** The store under test, and how to read a run's `run_versions` bytes and write a legacy row. */
interface Subject {
  open(): Promise<RunStore>;
  versionBytes(store: RunStore, runId: string): Promise<number>;
  legacyRow(store: RunStore, runId: string, version: number, blob: RunBlob): Promise<void>;
  setWorkspace(store: RunStore, runId: string, version: number, workspace: string): Promise<void>;
}

function compactionContract(subject: Subject) {
  let played: Awaited<ReturnType<typeof playReview>>;
  beforeAll(async () => {
    played = await playReview();
  });

  it("reads every kept version byte for byte, forks a compacted version as the uncompacted one, ≤ 8 KB", async () => {
    const store = await subject.open();
    const { runId, saves } = played;
    for (const s of saves) await store.save(JSON.parse(s.text) as RunBlob, [], [], s.events, s.cause);
    const kept = await store.versions(runId);
    // Folded: no `step` version is left, and admissions, picks and the Gate's answer are.
    expect(kept.map((v) => v.cause.kind)).not.toContain("step");
    expect(kept.map((v) => v.cause.kind)).toEqual(
      expect.arrayContaining(["start", "pick", "gate", "settled"]),
    );
    expect(kept.length).toBeLessThan(saves.length);
    for (const v of kept) {
      const read = (await store.version(runId, v.version))!;
      expect(JSON.stringify(read.blob), `version ${v.version}`).toBe(saves[v.version - 1]!.text);
      const forkOf = (blob: RunBlob) =>
        forkBlob({ blob, savedAtMs: Date.parse(v.at), newRunId: "run-fork", nowMs: 1_000 }, mints()).blob;
      expect(forkOf(read.blob)).toEqual(forkOf(JSON.parse(saves[v.version - 1]!.text) as RunBlob));
    }
    const bytes = await subject.versionBytes(store, runId);
    expect(bytes).toBeLessThanOrEqual(8 * 1024);
    await store.close();
  });

  it("reads rows written before the migration as they are, also beside packed ones, and keeps `workspace` through the fold", async () => {
    const store = await subject.open();
    const { saves } = played;
    const runId = "legacy-run";
    const blobs = saves.map((s) => ({ ...(JSON.parse(s.text) as RunBlob), runId }));
    // Versions 1–3 as an older jr2 wrote them (plain text), the rest saved now.
    await store.save(blobs[0]!, [], [], saves[0]!.events, saves[0]!.cause);
    for (let v = 2; v <= 3; v++) await subject.legacyRow(store, runId, v, blobs[v - 1]!);
    await subject.setWorkspace(store, runId, 3, JSON.stringify({ app: "c0ffee" }));
    for (let i = 3; i < blobs.length; i++)
      await store.save(blobs[i]!, [], [], saves[i]!.events, saves[i]!.cause);
    const kept = await store.versions(runId);
    for (const v of kept)
      expect(JSON.stringify((await store.version(runId, v.version))!.blob)).toBe(
        JSON.stringify(blobs[v.version - 1]),
      );
    // The legacy rows are `pick`s here: kept by the fold, read as they are, `workspace` untouched.
    expect(kept.find((v) => v.version === 3)?.workspace).toEqual({ app: "c0ffee" });
    expect(kept.find((v) => v.version === 2)).toBeDefined();
    await store.close();
  });
}

const ROW_BYTES =
  "length(run_id) + length(at) + length(status) + length(value) + length(cause) + length(blob) + coalesce(length(packed), 0) + 8";

describe("the SQLite store stores versions compactly (issue 22 §4)", () => {
  compactionContract({
    async open() {
      return openSqliteStore(sqliteDir("jr2-compaction-"));
    },
    async versionBytes(store, runId) {
      return (store as SqliteRunStore).db
        .prepare<[string], { n: number }>(`SELECT SUM(${ROW_BYTES}) AS n FROM run_versions WHERE run_id = ?`)
        .get(runId)!.n;
    },
    async legacyRow(store, runId, version, blob) {
      (store as SqliteRunStore).db
        .prepare(
          "INSERT INTO run_versions (run_id, version, at, status, value, cause, blob) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .run(
          runId,
          version,
          blob.updatedAt,
          blob.status,
          "null",
          '{"kind":"pick","child":"c#a","agent":"a","name":"n"}',
          JSON.stringify(blob),
        );
    },
    async setWorkspace(store, runId, version, workspace) {
      (store as SqliteRunStore).db
        .prepare("UPDATE run_versions SET workspace = ? WHERE run_id = ? AND version = ?")
        .run(workspace, runId, version);
    },
  });
});

describePg("the PostgreSQL store stores versions compactly (issue 22 §4)", () => {
  let db: Awaited<ReturnType<typeof freshPgDatabase>>;
  beforeAll(async () => {
    db = await freshPgDatabase("jr2_compaction");
  });
  afterAll(async () => {
    await db?.drop();
  });
  compactionContract({
    async open() {
      const store = await openPostgresStore(db.url, {
        instanceId: "compaction",
        advertiseUrl: "http://127.0.0.1:1",
        poolMax: 3,
      });
      await store.pool.query("TRUNCATE runs, run_events, run_versions, run_leases");
      return store;
    },
    async versionBytes(store, runId) {
      const pgRow = ROW_BYTES.replace(/length\(/g, "octet_length(");
      const { rows } = await (store as PostgresRunStore).pool.query<{ n: string }>(
        `SELECT SUM(${pgRow}) AS n FROM run_versions WHERE run_id = $1`,
        [runId],
      );
      return Number(rows[0]!.n);
    },
    async legacyRow(store, runId, version, blob) {
      await (store as PostgresRunStore).pool.query(
        "INSERT INTO run_versions (run_id, version, at, status, value, cause, blob) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        [
          runId,
          version,
          blob.updatedAt,
          blob.status,
          "null",
          '{"kind":"pick","child":"c#a","agent":"a","name":"n"}',
          JSON.stringify(blob),
        ],
      );
    },
    async setWorkspace(store, runId, version, workspace) {
      await (store as PostgresRunStore).pool.query(
        "UPDATE run_versions SET workspace = $1 WHERE run_id = $2 AND version = $3",
        [workspace, runId, version],
      );
    },
  });
});
