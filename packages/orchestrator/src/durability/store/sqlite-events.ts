/**
 * The SQLite store's event log (ADR-0256): the `run_events` table (migration 5) behind the
 * RunStore port's `appendEvents`, `events`, `lastEventSeq` and `pruneEvents`, and the insert a
 * save runs inside its own transaction. Each event is stored once by (run, seq) with its
 * original `seq` and `at`, as the JSON the feed served.
 * @see SPEC §8
 */
import type { RunFeedEvent } from "@jr2/wire";
import type Database from "better-sqlite3";

/** The event log's statements over one connection. */
export interface SqliteEventLog {
  /** Inserts `events` of `runId`, each once by seq; runs inside the caller's transaction, if any. */
  insert(runId: string, events: readonly RunFeedEvent[]): void;
  /** `insert` in a transaction of its own. */
  append(runId: string, events: readonly RunFeedEvent[]): void;
  page(runId: string, from: number, limit: number): RunFeedEvent[];
  last(runId: string): number | undefined;
  /** Deletes the logs of settled runs (not running, not drifted) updated before `before` (ISO-8601); returns the rows deleted. */
  prune(before: string): number;
}

/** Prepares the event log's statements on `db` (its schema is migrated already). */
export function sqliteEventLog(db: Database.Database): SqliteEventLog {
  const insertEvent = db.prepare(
    "INSERT OR IGNORE INTO run_events (run_id, seq, at, type, event) VALUES (?, ?, ?, ?, ?)",
  );
  const selectPage = db.prepare<[string, number, number], { event: string }>(
    "SELECT event FROM run_events WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
  );
  const selectLast = db.prepare<[string], { seq: number | null }>(
    "SELECT MAX(seq) AS seq FROM run_events WHERE run_id = ?",
  );
  const deleteSettled = db.prepare<[string]>(
    `DELETE FROM run_events WHERE run_id IN
       (SELECT run_id FROM runs WHERE status NOT IN ('running', 'drifted') AND updated_at < ?)`,
  );
  const insert = (runId: string, events: readonly RunFeedEvent[]) => {
    for (const e of events) insertEvent.run(runId, e.seq, e.at, e.type, JSON.stringify(e));
  };
  const appendTx = db.transaction(insert);
  return {
    insert,
    append: (runId, events) => {
      if (events.length > 0) appendTx(runId, events);
    },
    page: (runId, from, limit) =>
      selectPage.all(runId, from, Math.max(0, limit)).map((r) => JSON.parse(r.event) as RunFeedEvent),
    last: (runId) => selectLast.get(runId)?.seq ?? undefined,
    prune: (before) => deleteSettled.run(before).changes,
  };
}
