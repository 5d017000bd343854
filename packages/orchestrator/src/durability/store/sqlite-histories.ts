/**
 * The SQLite store's conversation histories (issue 27, ADR-0176): the `conversation_history`
 * table (migration 11) behind the {@link HistoryStore} port. A part is inserted once by (run,
 * iid, sha256) and only while the run is not settled; read in rowid (arrival) order.
 * @see SPEC §8
 */
import type Database from "better-sqlite3";
import type { HistoryStore, HistoryWrite } from "./history-store.js";

/** The statuses a run keeps its history in: a settled run's is deleted (ADR-0176). */
const LIVE = "('running', 'drifted')";

/**
 * The history statements over `db` (migrated already), plus `dropRun` (a settled save's, in
 * its transaction) and `prune` (retention: settled runs updated before `before`).
 */
export function sqliteHistories(db: Database.Database): HistoryStore & {
  dropRun(runId: string): number;
  prune(before: string): number;
} {
  const insert = db.prepare(
    `INSERT OR IGNORE INTO conversation_history (run_id, iid, sha256, submission_id, messages)
     SELECT ?, ?, ?, ?, ? WHERE NOT EXISTS
       (SELECT 1 FROM runs WHERE run_id = ? AND status NOT IN ${LIVE})`,
  );
  const dropIid = db.prepare("DELETE FROM conversation_history WHERE run_id = ? AND iid = ?");
  const dropRun = db.prepare<[string]>("DELETE FROM conversation_history WHERE run_id = ?");
  const select = db.prepare<
    [string],
    { iid: string; sha256: string; submission_id: string; messages: string }
  >("SELECT iid, sha256, submission_id, messages FROM conversation_history WHERE run_id = ? ORDER BY rowid");
  const prune = db.prepare<[string]>(
    `DELETE FROM conversation_history WHERE run_id IN
       (SELECT run_id FROM runs WHERE status NOT IN ${LIVE} AND updated_at < ?)`,
  );
  const writeTx = db.transaction((runId: string, writes: readonly HistoryWrite[]) => {
    for (const w of writes) {
      if ("drop" in w) dropIid.run(runId, w.iid);
      else insert.run(runId, w.iid, w.part.sha256, w.part.submissionId, w.part.messages, runId);
    }
  });
  return {
    async writeHistory(runId, writes) {
      if (writes.length > 0) writeTx(runId, writes);
    },
    histories: async (runId) =>
      select.all(runId).map((r) => ({
        iid: r.iid,
        part: { submissionId: r.submission_id, messages: r.messages, sha256: r.sha256 },
      })),
    dropRun: (runId) => dropRun.run(runId).changes,
    prune: (before) => prune.run(before).changes,
  };
}
