/**
 * The store contract's stores and rows (SPEC §8, ADR-0280): `eachStore` runs the SAME cases
 * against the memory store, SQLite (a temp dir) and PostgreSQL (a fresh database on the test
 * cluster; skipped without JR2_TEST_PG_URL, failed under CI=true); the builders make the rows the
 * cases save. What one store does, every store does: contract-rows.test.ts and
 * contract-lifetime.test.ts.
 */
import type { RunFeedEvent } from "@jr2/wire";
import { afterAll, beforeAll, describe } from "vitest";
import { openPostgresStore, type PostgresRunStore } from "../../src/durability/store/postgres.js";
import {
  createMemoryStore,
  type RunBlob,
  type RunStore,
  type StoreOptions,
} from "../../src/durability/store/run-store.js";
import { openSqliteStore, type SqliteRunStore } from "../../src/durability/store/sqlite.js";
import type { TranscriptRow, TurnRecord } from "../../src/durability/transcript-rows.js";
import type { UsageRecord } from "../../src/durability/usage-totals.js";
import { describePg, freshPgDatabase } from "../pg.js";
import { reviewBlob } from "./review-blob.js";
import { sqliteDir } from "./store-fixture.js";

/** One store under test: how to open a fresh, empty one, and (not memory) how to damage a row. */
export interface Subject {
  open(options?: StoreOptions): Promise<RunStore>;
  damage?(store: RunStore, runId: string): Promise<void>;
}

/** Runs `cases` (what `concern` of the contract says) against each store, in a describe of its own. */
export function eachStore(concern: string, cases: (subject: Subject) => void): void {
  describe(`the memory store keeps the store contract (§8): ${concern}`, () => {
    cases({ open: async (options) => createMemoryStore(options) });
  });

  describe(`the SQLite store keeps the store contract (§8): ${concern}`, () => {
    cases({
      async open(options) {
        return openSqliteStore(sqliteDir("jr2-contract-"), options);
      },
      async damage(store, runId) {
        (store as SqliteRunStore).db
          .prepare("UPDATE runs SET blob = '{not json' WHERE run_id = ?")
          .run(runId);
      },
    });
  });

  describePg(`the PostgreSQL store keeps the store contract (§8, ADR-0280): ${concern}`, () => {
    let db: Awaited<ReturnType<typeof freshPgDatabase>>;
    beforeAll(async () => {
      db = await freshPgDatabase("jr2_contract");
    });
    afterAll(async () => {
      await db?.drop();
    });
    cases({
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
}

/** A running run `runId` of workflow `review` with one ledgered admission, `patch` over it. */
export function blob(runId: string, patch: Partial<RunBlob> = {}): RunBlob {
  return reviewBlob(runId, {
    snapshot: { value: "implement", context: { n: 1 } },
    input: { task: "x" },
    ledger: { [`${runId}/coder`]: { turnId: "t1", submissionId: "s1", offset: "3", streamUrl: "/x" } },
    ...patch,
  });
}

/** `runId` settled `done` (succeeded, in `finished`) at `updatedAt`, `patch` over it. */
export const settled = (runId: string, updatedAt: string, patch: Partial<RunBlob> = {}) =>
  blob(runId, { status: "done", outcome: "succeeded", snapshot: { value: "finished" }, updatedAt, ...patch });

/** A pick's answer as a store keeps it. */
export const answer = { delivered: true, moved: true, turnComplete: true, allowed: [] };

/** A `status` feed event at `seq` (its `at` in the seq's second), carrying `value`. */
export const event = (seq: number, value: unknown = `s${seq}`): RunFeedEvent => ({
  seq,
  at: `2026-11-30T00:00:0${seq % 10}.000Z`,
  type: "status",
  status: "running",
  value,
});

/** A usage row of `r/coder`'s Submission `s1` at `position`. */
export const usageRecord = (position: string, patch: Partial<UsageRecord> = {}): UsageRecord => ({
  iid: "r/coder",
  submissionId: "s1",
  position,
  promptTokens: 10,
  cachedTokens: 4,
  completionTokens: null,
  ...patch,
});

/** A transcript row of `r/coder`'s Submission `s1` at `position`, in Turn `turnId`. */
export const row = (position: string, turnId: string, patch: Partial<TranscriptRow> = {}): TranscriptRow => ({
  iid: "r/coder",
  submissionId: "s1",
  position,
  turnId,
  at: "2026-11-30T00:00:00.000Z",
  entry: { kind: "message", role: "assistant", part: "answer", text: `text ${position}`, json: "{}" },
  ...patch,
});

/** A running Turn record of `coder` in `implement`, started at `startedAt`. */
export const turn = (turnId: string, startedAt: string, patch: Partial<TurnRecord> = {}): TurnRecord => ({
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
