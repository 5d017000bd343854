/**
 * {@link StartKeys} on PostgreSQL (issue 24 item 6, ADR-0282): table `run_start_keys`. The
 * reservation is one `INSERT … ON CONFLICT DO UPDATE … WHERE expired RETURNING`; when an earlier
 * start holds the key, its row is read. Two instances reserving one key at once: the primary
 * key lets one win, the other reads the winner's run.
 */
import type pg from "pg";
import { query, type StoreUrl } from "./postgres-connection.js";
import { START_KEY_WINDOW_MS, type StartKeys } from "./start-keys.js";

/** The start keys over `pool` (migrated). */
export function postgresStartKeys(pool: pg.Pool, where: StoreUrl): StartKeys {
  return {
    async reserve(key, workflow, runId, nowMs) {
      for (let attempt = 0; ; attempt++) {
        const { rows } = await query<{ run_id: string }>(
          pool,
          where,
          `INSERT INTO run_start_keys (key, run_id, workflow, created_ms) VALUES ($1, $2, $3, $4)
           ON CONFLICT (key) DO UPDATE SET run_id = excluded.run_id, workflow = excluded.workflow,
             created_ms = excluded.created_ms
           WHERE run_start_keys.created_ms <= $5
           RETURNING run_id`,
          [key, runId, workflow, nowMs, nowMs - START_KEY_WINDOW_MS],
        );
        if (rows.length > 0) return { runId, workflow, fresh: true };
        const held = await query<{ run_id: string; workflow: string }>(
          pool,
          where,
          "SELECT run_id, workflow FROM run_start_keys WHERE key = $1",
          [key],
        );
        const row = held.rows[0];
        if (row) return { runId: row.run_id, workflow: row.workflow, fresh: false };
        // Forgotten (that start failed) between the two statements: reserve again, once.
        if (attempt > 0) throw new Error(`the start key could not be reserved (${key.length} characters)`);
      }
    },
    async forget(key, runId) {
      await query(pool, where, "DELETE FROM run_start_keys WHERE key = $1 AND run_id = $2", [key, runId]);
    },
  };
}
