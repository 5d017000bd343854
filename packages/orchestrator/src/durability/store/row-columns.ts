/**
 * The column values both SQL stores write for a usage record and a transcript row, in their
 * tables' column order (SQLite's `sqlite-*.ts`, PostgreSQL's `postgres-*.ts`): one place says
 * how a record becomes a row, so the two stores cannot drift apart.
 * @see SPEC §8; ADR-0255, ADR-0257
 */
import type { TranscriptRow } from "../transcript-rows.js";
import type { UsageRecord } from "../usage-totals.js";

/** `usage_events` (run_id, iid, submission_id, position, prompt_tokens, cached_tokens, completion_tokens, finish_reason, turn_id). */
export const USAGE_COLUMNS =
  "run_id, iid, submission_id, position, prompt_tokens, cached_tokens, completion_tokens, finish_reason, turn_id";

/** The values of {@link USAGE_COLUMNS} for `record` of `runId`. */
export function usageValues(runId: string, r: UsageRecord): unknown[] {
  return [
    runId,
    r.iid,
    r.submissionId,
    r.position,
    r.promptTokens,
    r.cachedTokens,
    r.completionTokens,
    r.finishReason ?? null,
    r.turnId ?? null,
  ];
}

/** `transcript_entries` (run_id, iid, submission_id, position, turn_id, at, kind, entry, capped). */
export const TRANSCRIPT_COLUMNS = "run_id, iid, submission_id, position, turn_id, at, kind, entry, capped";

/** The values of {@link TRANSCRIPT_COLUMNS} for `row` of `runId` (the entry and its caps as JSON). */
export function transcriptValues(runId: string, r: TranscriptRow): unknown[] {
  return [
    runId,
    r.iid,
    r.submissionId,
    r.position,
    r.turnId,
    r.at,
    r.entry.kind,
    JSON.stringify(r.entry),
    r.capped ? JSON.stringify(r.capped) : null,
  ];
}
