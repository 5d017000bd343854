/**
 * {@link StartKeys} on SQLite (issue 24 item 6, ADR-0282): table `run_start_keys` (migration 10).
 * One statement reserves (an expired row is taken over), one reads the holder back.
 */
import type Database from "better-sqlite3";
import { START_KEY_WINDOW_MS, type StartKeys } from "./start-keys.js";

/** The start keys of the SQLite store `db` (migrated). */
export function sqliteStartKeys(db: Database.Database): StartKeys {
  const upsert = db.prepare<[string, string, string, number, number]>(
    `INSERT INTO run_start_keys (key, run_id, workflow, created_ms) VALUES (?, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET run_id = excluded.run_id, workflow = excluded.workflow,
       created_ms = excluded.created_ms
     WHERE run_start_keys.created_ms <= ?`,
  );
  const read = db.prepare<[string], { run_id: string; workflow: string }>(
    "SELECT run_id, workflow FROM run_start_keys WHERE key = ?",
  );
  const drop = db.prepare<[string, string]>("DELETE FROM run_start_keys WHERE key = ? AND run_id = ?");
  const reserve = db.transaction((key: string, workflow: string, runId: string, nowMs: number) => {
    upsert.run(key, runId, workflow, nowMs, nowMs - START_KEY_WINDOW_MS);
    return read.get(key)!;
  });
  return {
    async reserve(key, workflow, runId, nowMs) {
      const row = reserve(key, workflow, runId, nowMs);
      return { runId: row.run_id, workflow: row.workflow, fresh: row.run_id === runId };
    },
    async forget(key, runId) {
      drop.run(key, runId);
    },
  };
}
