/**
 * The PostgreSQL store's conversation histories (issue 27, ADR-0176): `conversation_history`
 * behind the {@link HistoryStore} port, as SQLite's: a part once by (run, iid, sha256), only
 * while the run is not settled, read in arrival order (`ord`). Writes run in the store's
 * fenced transactions: an instance that lost the run's lease writes none.
 * @see SPEC §8
 */

import type { HistoryStore } from "./history-store.js";
import type { Sql } from "./postgres-connection.js";
import { SETTLED_BEFORE } from "./postgres-events.js";
import type { WriteRun } from "./postgres-transcripts.js";

/** The history part of the port over `read` (the pool) and the store's fenced `write`. */
export function postgresHistories(read: Sql, write: WriteRun): HistoryStore {
  return {
    async writeHistory(runId, writes) {
      if (writes.length === 0) return;
      await write(runId, async (sql) => {
        for (const w of writes) {
          if ("drop" in w) {
            await sql.query("DELETE FROM conversation_history WHERE run_id = $1 AND iid = $2", [
              runId,
              w.iid,
            ]);
            continue;
          }
          await sql.query(
            `INSERT INTO conversation_history (run_id, iid, sha256, submission_id, messages)
             SELECT $1, $2, $3, $4, $5 WHERE NOT EXISTS
               (SELECT 1 FROM runs WHERE run_id = $1 AND status NOT IN ('running', 'drifted'))
             ON CONFLICT DO NOTHING`,
            [runId, w.iid, w.part.sha256, w.part.submissionId, w.part.messages],
          );
        }
      });
    },
    async histories(runId) {
      const { rows } = await read.query<{
        iid: string;
        sha256: string;
        submission_id: string;
        messages: string;
      }>(
        "SELECT iid, sha256, submission_id, messages FROM conversation_history WHERE run_id = $1 ORDER BY ord",
        [runId],
      );
      return rows.map((r) => ({
        iid: r.iid,
        part: { submissionId: r.submission_id, messages: r.messages, sha256: r.sha256 },
      }));
    },
  };
}

/** Deletes `runId`'s history (a settled save's, in its transaction); the rows deleted. */
export async function dropHistoryRows(sql: Sql, runId: string): Promise<number> {
  const r = await sql.query("DELETE FROM conversation_history WHERE run_id = $1", [runId]);
  return r.rowCount ?? 0;
}

/** Retention: deletes the histories of settled runs updated before `before`; the rows deleted. */
export async function pruneHistoryRows(sql: Sql, before: string): Promise<number> {
  const r = await sql.query(`DELETE FROM conversation_history WHERE run_id IN (${SETTLED_BEFORE})`, [before]);
  return r.rowCount ?? 0;
}
