/**
 * The PostgreSQL store's conversation histories (issue 27, ADR-0176): `conversation_history`
 * behind the {@link HistoryStore} port, as SQLite's: a part once by (run, iid, sha256), only
 * while the run is not settled, read in arrival order (`ord`).
 *
 * Kept aside from the run's own writes (ADR-0176 "Aside"): history transactions never join a
 * run's serial chain nor take the fence's row lock, so a pick's or event's commit never waits
 * for one; they run one at a time for the whole store (at most one pooled connection), and a
 * part is written only while the lease row names this instance — read without a lock, so an
 * instance that lost the run writes none and an adoption never waits for it. The settled run's
 * rows are deleted after its settling save, on the same aside chain (retention takes what that
 * misses).
 * @see SPEC §8
 */

import type pg from "pg";
import type { HistoryStore } from "./history-store.js";
import { inTransaction, query, type Sql, type StoreUrl } from "./postgres-connection.js";
import { SETTLED_BEFORE } from "./postgres-events.js";

/** The history part of the port, plus `dropSettled` (after a settling save; never rejects). */
export interface PostgresHistories extends HistoryStore {
  dropSettled(runId: string): void;
}

/** The history part of the port over `pool`, for instance `instanceId`. */
export function postgresHistories(pool: pg.Pool, where: StoreUrl, instanceId: string): PostgresHistories {
  // One chain for every run: order per run kept, one connection at most, saves never queued behind.
  let chain: Promise<unknown> = Promise.resolve();
  const aside = <T>(task: () => Promise<T>): Promise<T> => {
    const next = chain.then(task, task);
    chain = next.catch(() => {});
    return next;
  };
  return {
    writeHistory: (runId, writes) =>
      writes.length === 0
        ? Promise.resolve()
        : aside(() =>
            inTransaction(pool, where, async (sql) => {
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
                   SELECT $1, $2, $3, $4, $5
                   WHERE EXISTS (SELECT 1 FROM run_leases WHERE run_id = $1 AND owner_id = $6)
                     AND NOT EXISTS (SELECT 1 FROM runs WHERE run_id = $1 AND status NOT IN ('running', 'drifted'))
                   ON CONFLICT DO NOTHING`,
                  [runId, w.iid, w.part.sha256, w.part.submissionId, w.part.messages, instanceId],
                );
              }
            }),
          ),
    // Read directly (never queued behind a history write): restore and adoption never wait for one.
    histories: (runId) =>
      (async () => {
        const { rows } = await query<{
          iid: string;
          sha256: string;
          submission_id: string;
          messages: string;
        }>(
          pool,
          where,
          "SELECT iid, sha256, submission_id, messages FROM conversation_history WHERE run_id = $1 ORDER BY ord",
          [runId],
        );
        return rows.map((r) => ({
          iid: r.iid,
          part: { submissionId: r.submission_id, messages: r.messages, sha256: r.sha256 },
        }));
      })(),
    dropSettled(runId) {
      void aside(() => inTransaction(pool, where, (sql) => dropHistoryRows(sql, runId))).catch(() => {});
    },
  };
}

/** Deletes `runId`'s history; the rows deleted. */
export async function dropHistoryRows(sql: Sql, runId: string): Promise<number> {
  const r = await sql.query("DELETE FROM conversation_history WHERE run_id = $1", [runId]);
  return r.rowCount ?? 0;
}

/** Retention: deletes the histories of settled runs updated before `before`; the rows deleted. */
export async function pruneHistoryRows(sql: Sql, before: string): Promise<number> {
  const r = await sql.query(`DELETE FROM conversation_history WHERE run_id IN (${SETTLED_BEFORE})`, [before]);
  return r.rowCount ?? 0;
}
