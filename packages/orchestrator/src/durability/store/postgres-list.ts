/**
 * `RunStore.list` of the PostgreSQL store (ADR-0062), as SQLite's: filters and the page bound
 * in SQL over the `runs_*_listed` indexes, newest first (`updated_at`, then `run_id`, both in
 * byte order).
 * @see SPEC §4.1, §8
 */
import type { Sql } from "./postgres-connection.js";
import type { RunBlob, RunListFilter, StoredRunSummary } from "./run-store.js";

interface ListedRow {
  run_id: string;
  workflow: string;
  status: string;
  updated_at: string;
  outcome: string | null;
  final_state: string | null;
}

/** `RunStore.list`: the runs matching `filter`, newest first, at most `limit`, after `after`. */
export async function listPostgresRuns(sql: Sql, filter: RunListFilter = {}): Promise<StoredRunSummary[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  for (const column of ["status", "workflow", "outcome"] as const) {
    const value = filter[column];
    if (value !== undefined) where.push(`${column} = ${param(value)}`);
  }
  if (filter.after) {
    const at = param(filter.after.updatedAt);
    const id = param(filter.after.runId);
    where.push(`(updated_at < ${at} OR (updated_at = ${at} AND run_id < ${id}))`);
  }
  const text =
    "SELECT run_id, workflow, status, updated_at, outcome, final_state FROM runs" +
    (where.length ? ` WHERE ${where.join(" AND ")}` : "") +
    " ORDER BY updated_at DESC, run_id DESC" +
    (filter.limit === undefined ? "" : ` LIMIT ${param(Math.max(0, filter.limit))}`);
  const { rows } = await sql.query<ListedRow>(text, params);
  return rows.map((r) => ({
    runId: r.run_id,
    workflow: r.workflow,
    status: r.status as RunBlob["status"],
    updatedAt: r.updated_at,
    ...(r.outcome === null ? {} : { outcome: r.outcome as StoredRunSummary["outcome"] & string }),
    ...(r.final_state === null ? {} : { finalState: JSON.parse(r.final_state) as unknown }),
  }));
}
