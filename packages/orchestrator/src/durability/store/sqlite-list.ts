/**
 * `RunStore.list` of the SQLite store (ADR-0062): filters and the page bound in SQL, over the
 * `runs_*_listed` indexes of migration 5, newest first (`updated_at`, then `run_id`).
 * @see SPEC §4.1, §8
 */
import type Database from "better-sqlite3";
import type { RunBlob, RunListFilter, StoredRunSummary } from "./run-store.js";

interface ListedRow {
  run_id: string;
  workflow: string;
  status: string;
  updated_at: string;
  outcome: string | null;
  final_state: string | null;
}

/**
 * `RunStore.list` over the `runs_*_listed` indexes: filters and the page bound in SQL.
 * @throws what better-sqlite3 throws (the store wraps it naming the file)
 */
export function listRuns(db: Database.Database, filter: RunListFilter = {}): StoredRunSummary[] {
  const where: string[] = [];
  const params: Record<string, string | number> = {};
  for (const column of ["status", "workflow", "outcome"] as const) {
    const value = filter[column];
    if (value === undefined) continue;
    where.push(`${column} = @${column}`);
    params[column] = value;
  }
  if (filter.after) {
    where.push("(updated_at < @afterAt OR (updated_at = @afterAt AND run_id < @afterId))");
    params.afterAt = filter.after.updatedAt;
    params.afterId = filter.after.runId;
  }
  const sql =
    "SELECT run_id, workflow, status, updated_at, outcome, final_state FROM runs" +
    (where.length ? ` WHERE ${where.join(" AND ")}` : "") +
    " ORDER BY updated_at DESC, run_id DESC" +
    (filter.limit === undefined ? "" : " LIMIT @limit");
  if (filter.limit !== undefined) params.limit = filter.limit;
  return db
    .prepare<Record<string, string | number>, ListedRow>(sql)
    .all(params)
    .map((r) => ({
      runId: r.run_id,
      workflow: r.workflow,
      status: r.status as RunBlob["status"],
      updatedAt: r.updated_at,
      ...(r.outcome === null ? {} : { outcome: r.outcome as StoredRunSummary["outcome"] & string }),
      ...(r.final_state === null ? {} : { finalState: JSON.parse(r.final_state) as unknown }),
    }));
}
