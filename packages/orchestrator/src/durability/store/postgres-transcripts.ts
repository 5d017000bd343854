/**
 * The PostgreSQL store's Turn transcripts (ADR-0257): `transcript_entries` and `turns` behind
 * the {@link TranscriptStore} port, as SQLite's: entries once by (run, iid, submission,
 * position), read in recording order (`ord`); a Turn record upserted by (run, turnId), keeping
 * its place in start order. Writes run in the store's fenced transactions (`write`).
 * @see SPEC §8
 */
import type { TranscriptRow, TurnRecord } from "../transcript-rows.js";
import { KEEP_PICKED_TURN, transcriptKey } from "../transcript-rows.js";
import { insertMany, type Sql } from "./postgres-connection.js";
import { SETTLED_BEFORE } from "./postgres-events.js";
import { TRANSCRIPT_COLUMNS, transcriptValues } from "./row-columns.js";
import type { TranscriptStore } from "./transcript-store.js";

/** A `transcript_entries` row as read. */
interface EntryRow {
  iid: string;
  submission_id: string;
  position: string;
  turn_id: string;
  at: string;
  entry: string;
  capped: string | null;
}

/** Runs `body` in a fenced write transaction of `runId` (the store's). */
export type WriteRun = (runId: string, body: (sql: Sql) => Promise<void>) => Promise<void>;

/** The transcript part of the port over `read` (the pool) and the store's fenced `write`. */
export function postgresTranscripts(read: Sql, write: WriteRun): TranscriptStore {
  const entries = (where: string, params: unknown[]) =>
    read
      .query<EntryRow>(`SELECT * FROM transcript_entries WHERE ${where} ORDER BY ord`, params)
      .then((r) => r.rows.map(rowOf));
  return {
    async recordTranscript(runId, rows) {
      if (rows.length === 0) return;
      await write(runId, async (sql) => {
        await insertMany(
          sql,
          `INSERT INTO transcript_entries (${TRANSCRIPT_COLUMNS})`,
          9,
          rows.map((r) => transcriptValues(runId, r)),
        );
      });
    },
    async transcriptKeys(runId) {
      const { rows } = await read.query<{ iid: string; submission_id: string; position: string }>(
        "SELECT iid, submission_id, position FROM transcript_entries WHERE run_id = $1 ORDER BY ord",
        [runId],
      );
      return rows.map((r) =>
        transcriptKey({ iid: r.iid, submissionId: r.submission_id, position: r.position }),
      );
    },
    transcript: (runId, turnId) => entries("run_id = $1 AND turn_id = $2", [runId, turnId]),
    prefixes: (runId, iid) => entries("run_id = $1 AND iid = $2 AND kind = 'prefix'", [runId, iid]),
    async recordTurns(runId, turns) {
      if (turns.length > 0) await write(runId, (sql) => upsertTurns(sql, runId, turns));
    },
    async turns(runId) {
      const { rows } = await read.query<{ record: string }>(
        "SELECT record FROM turns WHERE run_id = $1 ORDER BY started_at, ord",
        [runId],
      );
      return rows.map((r) => JSON.parse(r.record) as TurnRecord);
    },
  };
}

/**
 * Upserts Turn records of `runId` inside the caller's transaction `sql` (a pick's save writes
 * the Turn it ends here too); a stored `picked` record is never replaced by a non-picked one.
 */
export async function upsertTurns(sql: Sql, runId: string, turns: readonly TurnRecord[]): Promise<void> {
  if (turns.length === 0) return;
  // One statement cannot upsert a key twice: the last record of each turnId is the one kept.
  const last = [...new Map(turns.map((t) => [t.turnId, t])).values()];
  await insertMany(
    sql,
    "INSERT INTO turns (run_id, turn_id, started_at, record)",
    4,
    last.map((t) => [runId, t.turnId, t.startedAt, JSON.stringify(t)]),
    `ON CONFLICT (run_id, turn_id) DO UPDATE SET started_at = excluded.started_at, record = excluded.record
     ${KEEP_PICKED_TURN((record) => `(${record}::json ->> 'outcome')`)}`,
  );
}

/** Deletes the transcripts and Turn records of settled runs updated before `before`; the rows deleted. */
export async function pruneTranscriptRows(sql: Sql, before: string): Promise<number> {
  const a = await sql.query(`DELETE FROM transcript_entries WHERE run_id IN (${SETTLED_BEFORE})`, [before]);
  const b = await sql.query(`DELETE FROM turns WHERE run_id IN (${SETTLED_BEFORE})`, [before]);
  return (a.rowCount ?? 0) + (b.rowCount ?? 0);
}

/** A read row as a {@link TranscriptRow}. */
function rowOf(r: EntryRow): TranscriptRow {
  return {
    iid: r.iid,
    submissionId: r.submission_id,
    position: r.position,
    turnId: r.turn_id,
    at: r.at,
    entry: JSON.parse(r.entry) as TranscriptRow["entry"],
    ...(r.capped === null ? {} : { capped: JSON.parse(r.capped) as Record<string, number> }),
  };
}
