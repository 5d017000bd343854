/**
 * The PostgreSQL store's pick answers and usage rows (SPEC §8, ADR-0252, ADR-0255), as SQLite's:
 * inserted once by key inside the caller's transaction (`ON CONFLICT DO NOTHING`), read in
 * recording order (`ord`); a pick without turnId finds the newest answer of any Turn.
 * @see SPEC §8
 */
import type { UsageRecord } from "../usage-totals.js";
import { insertMany, type Sql } from "./postgres-connection.js";
import { USAGE_COLUMNS, usageValues } from "./row-columns.js";
import type { PickKey, StoredPickAnswer } from "./run-store.js";

/** Inserts pick answers once by (run, iid, turn, toolCallId); a Turn without turnId is `''`. */
export async function insertPicks(
  sql: Sql,
  runId: string,
  picks: readonly StoredPickAnswer[],
): Promise<void> {
  await insertMany(
    sql,
    "INSERT INTO pick_answers (run_id, iid, turn_id, tool_call_id, scope, answer)",
    6,
    picks.map((p) => [runId, p.iid, p.turnId ?? "", p.toolCallId, p.scope, JSON.stringify(p.answer)]),
  );
}

/** Inserts usage records once by (run, iid, submissionId, position). */
export async function insertUsage(sql: Sql, runId: string, records: readonly UsageRecord[]): Promise<void> {
  await insertMany(
    sql,
    `INSERT INTO usage_events (${USAGE_COLUMNS})`,
    9,
    records.map((r) => usageValues(runId, r)),
  );
}

/** The stored answer for `key`: by Turn, or (no turnId) the newest of `(iid, toolCallId)` in any Turn. */
export async function selectPick(
  sql: Sql,
  runId: string,
  key: PickKey,
): Promise<StoredPickAnswer | undefined> {
  const { iid, turnId, toolCallId } = key;
  const { rows } = await sql.query<{ answer: string; scope: string; turn_id: string }>(
    turnId !== undefined
      ? "SELECT answer, scope, turn_id FROM pick_answers WHERE run_id = $1 AND iid = $2 AND tool_call_id = $3 AND turn_id = $4"
      : "SELECT answer, scope, turn_id FROM pick_answers WHERE run_id = $1 AND iid = $2 AND tool_call_id = $3 ORDER BY ord DESC LIMIT 1",
    turnId !== undefined ? [runId, iid, toolCallId, turnId] : [runId, iid, toolCallId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    iid,
    turnId: turnId ?? (row.turn_id === "" ? null : row.turn_id),
    toolCallId,
    scope: row.scope,
    answer: JSON.parse(row.answer) as StoredPickAnswer["answer"],
  };
}

/** A `usage_events` row as read (BIGINT columns arrive as strings). */
export interface UsageRow {
  iid: string;
  submission_id: string;
  position: string;
  prompt_tokens: string | null;
  cached_tokens: string | null;
  completion_tokens: string | null;
  finish_reason: string | null;
  turn_id: string | null;
}

/** A read row as a {@link UsageRecord}. */
export function usageOfRow(r: UsageRow): UsageRecord {
  const n = (v: string | null) => (v === null ? null : Number(v));
  return {
    iid: r.iid,
    submissionId: r.submission_id,
    position: r.position,
    promptTokens: n(r.prompt_tokens),
    cachedTokens: n(r.cached_tokens),
    completionTokens: n(r.completion_tokens),
    ...(r.finish_reason === null ? {} : { finishReason: r.finish_reason }),
    ...(r.turn_id === null ? {} : { turnId: r.turn_id }),
  };
}
