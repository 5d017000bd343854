/**
 * The PostgreSQL run store (SPEC §8, ADR-0280): the RunStore port over a node-postgres pool,
 * with the SQLite store's semantics — a save writes the run row, pick answers, usage, events
 * and the version (pruned on settling) in ONE transaction; every once-by-key write is
 * `ON CONFLICT DO NOTHING`; blobs are stored as text, byte for byte. Besides: `ownership`
 * (run leases with a fencing epoch: every write transaction of a run begins with the fence,
 * `postgres-leases.ts`) and `notices` (`LISTEN/NOTIFY` of `(runId, seq)`, `postgres-notices.ts`).
 * Writes of one run are sent one after another, in call order, as SQLite commits them.
 * @see SPEC §8
 */
import { performance } from "node:perf_hooks";
import type { RunStatus } from "@jr2/wire";
import type pg from "pg";
import type { Logger } from "pino";
import { turnRecordsOfSave } from "../transcript-rows.js";
import { DEFAULT_LEASE_MS } from "./ownership.js";
import {
  connectionError,
  createPool,
  inTransaction,
  parseStoreUrl,
  query,
  type Sql,
  type StoreUrl,
} from "./postgres-connection.js";
import { insertEvents, lastSeq, lastSeqs, pageEvents, pruneEventRows } from "./postgres-events.js";
import { postgresHistories, pruneHistoryRows } from "./postgres-histories.js";
import { type AfterCommit, type PostgresLeases, postgresLeases } from "./postgres-leases.js";
import { listPostgresRuns } from "./postgres-list.js";
import { migratePostgres } from "./postgres-migrations.js";
import { type PostgresNotices, postgresNotices } from "./postgres-notices.js";
import { insertPicks, insertUsage, selectPick, type UsageRow, usageOfRow } from "./postgres-rows.js";
import { postgresStartKeys } from "./postgres-start-keys.js";
import { postgresTranscripts, pruneTranscriptRows, upsertTurns } from "./postgres-transcripts.js";
import { getVersion, insertVersion, listVersions, pruneVersionRows } from "./postgres-versions.js";
import {
  checkCondition,
  decodeRunBlob,
  type RunBlob,
  type RunStore,
  type StoreOptions,
  summaryOfBlob,
} from "./run-store.js";
import { causeOfSave } from "./version-cause.js";
import { previousBlob } from "./version-rows.js";
import { DEFAULT_VERSIONS_KEPT, isSettled } from "./versions.js";

/** Options of {@link openPostgresStore}. */
export interface PostgresStoreOptions extends StoreOptions {
  /** This instance's id in lease rows (`JR2_INSTANCE_ID`). */
  instanceId: string;
  /** The URL peers forward to (`JR2_ADVERTISE_URL`), written into lease rows. */
  advertiseUrl: string;
  /** Lease length, ms; default 15000. Also the sessions' `idle_in_transaction_session_timeout` (at least 1 s). */
  leaseMs?: number;
  /** Each statement's limit, ms; default 30000 (at least 2 × leaseMs). */
  statementTimeoutMs?: number;
  /** Pool size; default 10. */
  poolMax?: number;
  /** Where reconnects and idle-connection errors are logged; default nowhere. */
  log?: Pick<Logger, "warn" | "info">;
}

/** The PostgreSQL store: the port with ownership and notices, its redacted URL and its pool (tests). */
export interface PostgresRunStore extends RunStore {
  readonly ownership: PostgresLeases;
  readonly notices: PostgresNotices;
  /** `postgres://user:***@host:port/db`: what logs and errors may name. */
  readonly where: StoreUrl;
  readonly pool: pg.Pool;
}

const UPSERT_RUN = `INSERT INTO runs (run_id, workflow, status, updated_at, outcome, final_state, blob)
  VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at,
    outcome = excluded.outcome, final_state = excluded.final_state, blob = excluded.blob`;

/**
 * Opens the store at `url`: connects, applies the missing migrations (under an advisory lock),
 * starts the LISTEN connection.
 * @throws Error naming JR2_STORE_URL (redacted) when the URL is bad; naming host, port and
 *   database (never the password) when the database cannot be reached; naming the remedy when
 *   its schema is newer than this jr2 or it is not a jr2 store
 */
export async function openPostgresStore(
  url: string,
  options: PostgresStoreOptions,
): Promise<PostgresRunStore> {
  const where = parseStoreUrl(url);
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const settings = {
    // ≈ the lease; at least 1 s, so a busy event loop between two statements of a save does not
    // kill it (an adoption waits for the row lock at most this long: never a correctness matter).
    idleInTransactionMs: Math.max(leaseMs, 1_000),
    statementTimeoutMs: options.statementTimeoutMs ?? Math.max(30_000, 2 * leaseMs),
    ...(options.poolMax === undefined ? {} : { max: options.poolMax }),
  };
  const log = options.log ?? { warn() {}, info() {} };
  const pool = createPool(where, settings, (error) =>
    log.warn(
      { reason: error instanceof Error ? error.message : String(error) },
      "run store: an idle connection failed",
    ),
  );
  try {
    const client = await pool.connect().catch((error: unknown) => {
      throw connectionError(where, error);
    });
    try {
      await migratePostgres(client, where.redacted);
    } finally {
      client.release();
    }
    const notices = postgresNotices(where, settings, log, (runIds) => lastSeqs(pool, runIds));
    await notices.start();
    const leases = postgresLeases(pool, where, { ...options, leaseMs });
    return postgresRunStore(pool, where, leases, notices, {
      versionsKept: options.versionsKept ?? DEFAULT_VERSIONS_KEPT,
      instanceId: options.instanceId,
    });
  } catch (error) {
    await pool.end().catch(() => {});
    throw connectionError(where, error);
  }
}

/** The port over `pool`. */
function postgresRunStore(
  pool: pg.Pool,
  where: StoreUrl,
  leases: PostgresLeases,
  notices: PostgresNotices,
  { versionsKept, instanceId }: { versionsKept: number; instanceId: string },
): PostgresRunStore {
  const serial = serialByRun();
  /** One fenced write transaction of `runId`: the fence first, then `body`; nothing commits when either throws. */
  const fenced = (runId: string, claim: boolean, body: (sql: Sql, after: AfterCommit[]) => Promise<void>) =>
    serial(runId, async () => {
      const sentAt = performance.now();
      const after: AfterCommit[] = [];
      try {
        await inTransaction(pool, where, async (sql) => {
          after.push(await leases.fence(sql, runId, claim, sentAt));
          await body(sql, after);
        });
      } catch (error) {
        for (const a of after) a.failed();
        throw error;
      }
      for (const a of after) a.committed();
    });
  const write = (runId: string, body: (sql: Sql) => Promise<void>) =>
    fenced(runId, false, (sql) => body(sql));
  // A read keyed by a NUL finds nothing (PostgreSQL text holds none; ADR-0280 "NUL").
  const read = <R extends pg.QueryResultRow>(text: string, params: unknown[]) =>
    query<R>(pool, where, text, params);
  const readSql: Sql = { query: ((text: string, params: unknown[]) => read(text, params)) as Sql["query"] };
  const transcripts = postgresTranscripts(readSql, write);
  const histories = postgresHistories(pool, where, instanceId);

  return {
    // A release waits for the run's writes already sent: a queued save must not claim it anew after.
    ownership: { ...leases, release: (runId) => serial(runId, () => leases.release(runId)) },
    notices,
    startKeys: postgresStartKeys(pool, where),
    where,
    pool,
    ...transcripts,
    conversationHistory: { writeHistory: histories.writeHistory, histories: histories.histories },
    save: (blob, picks = [], usage = [], events = [], cause, when, turns) =>
      fenced(blob.runId, blob.status === "running", async (sql, after) => {
        // The conditional update (issue 22): the row locked with its status checked, after the fence.
        // The blob saved before: a ledger entry new since is an admission (its version's cause).
        const { rows } = await sql.query<{ status: RunStatus; blob: string }>(
          `SELECT status, blob FROM runs WHERE run_id = $1${when ? " FOR UPDATE" : ""}`,
          [blob.runId],
        );
        checkCondition(blob.runId, when, rows[0]?.status);
        const previous = rows[0] && !cause ? previousBlob(rows[0].blob) : undefined;
        const { outcome, finalState } = summaryOfBlob(blob);
        await sql.query(UPSERT_RUN, [
          blob.runId,
          blob.workflow,
          blob.status,
          blob.updatedAt,
          outcome ?? null,
          finalState === undefined ? null : JSON.stringify(finalState),
          JSON.stringify(blob),
        ]);
        await insertPicks(sql, blob.runId, picks);
        await upsertTurns(sql, blob.runId, turnRecordsOfSave(picks, turns));
        await insertUsage(sql, blob.runId, usage);
        await insertEvents(sql, blob.runId, events);
        await insertVersion(
          sql,
          blob,
          versionsKept,
          (first) => cause ?? causeOfSave(blob, events, first, previous),
        );
        if (blob.status !== "running") after.push(await leases.settle(sql, blob.runId));
        // A settled run's conversations are never admitted again (ADR-0176): deleted aside, after
        // the commit, so the settling save never waits on a history transaction.
        if (isSettled(blob.status))
          after.push({ committed: () => histories.dropSettled(blob.runId), failed() {} });
      }),
    versions: (runId) => listVersions(readSql, runId),
    version: (runId, version) => getVersion(readSql, runId, version),
    async appendEvents(runId, events) {
      if (events.length > 0) await write(runId, (sql) => insertEvents(sql, runId, events));
    },
    events: (runId, from, limit) => pageEvents(readSql, runId, from, limit),
    lastEventSeq: (runId) => lastSeq(readSql, runId),
    // Log, transcripts, Turn records and versions of a settled run go together (ADR-0257, ADR-0270).
    pruneEvents: (before) =>
      inTransaction(pool, where, async (sql) => {
        const events = await pruneEventRows(sql, before);
        const transcriptRows = await pruneTranscriptRows(sql, before);
        const histories = await pruneHistoryRows(sql, before);
        return events + transcriptRows + histories + (await pruneVersionRows(sql, before));
      }),
    async recordUsage(runId, records) {
      if (records.length > 0) await write(runId, (sql) => insertUsage(sql, runId, records));
    },
    async usage(runId) {
      const { rows } = await read<UsageRow>("SELECT * FROM usage_events WHERE run_id = $1 ORDER BY ord", [
        runId,
      ]);
      return rows.map(usageOfRow);
    },
    async load(runId) {
      const { rows } = await read<{ blob: string }>("SELECT blob FROM runs WHERE run_id = $1", [runId]);
      return rows[0] ? decodeRunBlob(runId, rows[0].blob) : undefined;
    },
    list: (filter) => listPostgresRuns(readSql, filter),
    async live() {
      const { rows } = await read<{ run_id: string; blob: string }>(
        "SELECT run_id, blob FROM runs WHERE status = 'running' ORDER BY run_id",
        [],
      );
      // A damaged row is left out here; restore reports it by id (it reads through `load`).
      return rows.flatMap((r): RunBlob[] => {
        try {
          return [decodeRunBlob(r.run_id, r.blob)];
        } catch {
          return [];
        }
      });
    },
    pickAnswer: (runId, key) => selectPick(readSql, runId, key),
    async close() {
      await notices.close();
      await pool.end().catch(() => {});
    },
  };
}

/** Runs each run's tasks one after another, in call order (a failed task does not stop the next). */
function serialByRun() {
  const queues = new Map<string, Promise<unknown>>();
  return <T>(runId: string, task: () => Promise<T>): Promise<T> => {
    const next = (queues.get(runId) ?? Promise.resolve()).then(task, task);
    const done = next.catch(() => {});
    queues.set(runId, done);
    void done.then(() => {
      if (queues.get(runId) === done) queues.delete(runId);
    });
    return next;
  };
}
