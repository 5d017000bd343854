/**
 * The SQLite store's Turn transcripts (ADR-0257): the `transcript_entries` and `turns` tables
 * (migration 7) behind the {@link TranscriptStore} port. Entries are inserted once by (run,
 * iid, submission, position) and read in rowid (recording) order; a Turn record is upserted
 * by (run, turnId), keeping its rowid (its place in start order).
 * @see SPEC §8
 */
import type Database from "better-sqlite3";
import type { TranscriptRow, TurnRecord } from "../transcript-rows.js";
import { KEEP_PICKED_TURN, transcriptKey } from "../transcript-rows.js";
import { transcriptValues } from "./row-columns.js";
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

/**
 * The transcript statements over `db` (migrated already), plus `prune` for retention and
 * `upsertTurns`, the synchronous Turn-record write a pick's save runs inside its transaction.
 */
export function sqliteTranscripts(db: Database.Database): TranscriptStore & {
  prune(before: string): number;
  upsertTurns(runId: string, turns: readonly TurnRecord[]): void;
} {
  const insertEntry = db.prepare(
    `INSERT OR IGNORE INTO transcript_entries (run_id, iid, submission_id, position, turn_id, at, kind, entry, capped)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const selectKeys = db.prepare<[string], { iid: string; submission_id: string; position: string }>(
    "SELECT iid, submission_id, position FROM transcript_entries WHERE run_id = ?",
  );
  const selectTurnEntries = db.prepare<[string, string], EntryRow>(
    "SELECT * FROM transcript_entries WHERE run_id = ? AND turn_id = ? ORDER BY rowid",
  );
  const selectPrefixes = db.prepare<[string, string], EntryRow>(
    "SELECT * FROM transcript_entries WHERE run_id = ? AND iid = ? AND kind = 'prefix' ORDER BY rowid",
  );
  const upsertTurn = db.prepare(
    `INSERT INTO turns (run_id, turn_id, started_at, record) VALUES (?, ?, ?, ?)
     ON CONFLICT(run_id, turn_id) DO UPDATE SET started_at = excluded.started_at, record = excluded.record
     ${KEEP_PICKED_TURN((record) => `json_extract(${record}, '$.outcome')`)}`,
  );
  const selectTurns = db.prepare<[string], { record: string }>(
    "SELECT record FROM turns WHERE run_id = ? ORDER BY started_at, rowid",
  );
  const settled = "SELECT run_id FROM runs WHERE status NOT IN ('running', 'drifted') AND updated_at < ?";
  const deleteEntries = db.prepare<[string]>(`DELETE FROM transcript_entries WHERE run_id IN (${settled})`);
  const deleteTurns = db.prepare<[string]>(`DELETE FROM turns WHERE run_id IN (${settled})`);
  const entriesTx = db.transaction((runId: string, rows: readonly TranscriptRow[]) => {
    for (const r of rows) insertEntry.run(...transcriptValues(runId, r));
  });
  const turnsTx = db.transaction((runId: string, turns: readonly TurnRecord[]) => {
    for (const t of turns) upsertTurn.run(runId, t.turnId, t.startedAt, JSON.stringify(t));
  });
  return {
    async recordTranscript(runId, rows) {
      if (rows.length > 0) entriesTx(runId, rows);
    },
    transcriptKeys: async (runId) =>
      selectKeys
        .all(runId)
        .map((r) => transcriptKey({ iid: r.iid, submissionId: r.submission_id, position: r.position })),
    transcript: async (runId, turnId) => selectTurnEntries.all(runId, turnId).map(rowOf),
    prefixes: async (runId, iid) => selectPrefixes.all(runId, iid).map(rowOf),
    async recordTurns(runId, turns) {
      if (turns.length > 0) turnsTx(runId, turns);
    },
    upsertTurns: (runId, turns) => {
      for (const t of turns) upsertTurn.run(runId, t.turnId, t.startedAt, JSON.stringify(t));
    },
    turns: async (runId) => selectTurns.all(runId).map((r) => JSON.parse(r.record) as TurnRecord),
    prune: (before) => deleteEntries.run(before).changes + deleteTurns.run(before).changes,
  };
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
