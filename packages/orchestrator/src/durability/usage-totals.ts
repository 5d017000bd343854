import type { UsageTotals } from "@jr2/wire";

/** One model request's usage as recorded: `null` = the provider did not report it. */
export interface RequestUsage {
  promptTokens: number | null;
  cachedTokens: number | null;
  completionTokens: number | null;
}

/**
 * One model request's usage as the store records it (ADR-0255): once per key — the
 * conversation (`iid`), its Submission and the event's position in that conversation's stream
 * (the Harness offset it was read at) — so a stream read again after a restart adds nothing.
 */
export interface UsageRecord extends RequestUsage {
  iid: string;
  submissionId: string;
  position: string;
  finishReason?: string;
  /** The Turn whose model request it was (ADR-0257): its Turn's usage sums these; absent in older rows. */
  turnId?: string;
}

/** The identity of a usage record: `[iid, submissionId, position]` as JSON. */
export function usageKey(record: Pick<UsageRecord, "iid" | "submissionId" | "position">): string {
  return JSON.stringify([record.iid, record.submissionId, record.position]);
}

/**
 * Sums recorded model requests into a run's totals (ADR-0400): a total is `null` when any
 * request left that field unreported; the `reported` pair covers only requests that reported
 * both prompt and cached tokens, so a cache % read from it is never diluted by unknowns.
 * @see SPEC §14 (usage that was not reported is `null`, never 0)
 */
export function sumUsage(requests: Iterable<RequestUsage>): UsageTotals {
  let prompt: number | null = 0;
  let cached: number | null = 0;
  let completion: number | null = 0;
  let count = 0;
  let unreported = 0;
  const reported = { promptTokens: 0, cachedTokens: 0 };
  for (const u of requests) {
    count++;
    if (u.promptTokens === null || u.cachedTokens === null || u.completionTokens === null) unreported++;
    prompt = u.promptTokens === null || prompt === null ? null : prompt + u.promptTokens;
    cached = u.cachedTokens === null || cached === null ? null : cached + u.cachedTokens;
    completion = u.completionTokens === null || completion === null ? null : completion + u.completionTokens;
    if (u.promptTokens !== null && u.cachedTokens !== null) {
      reported.promptTokens += u.promptTokens;
      reported.cachedTokens += u.cachedTokens;
    }
  }
  return {
    promptTokens: prompt,
    cachedTokens: cached,
    completionTokens: completion,
    requests: count,
    unreportedRequests: unreported,
    reported,
  };
}

/**
 * The cache hit rate of totals in whole percent, over reported requests only; `null` when no
 * request reported both numbers (shown as `?`, never 0%).
 */
export function cachePercent(totals: UsageTotals): number | null {
  const base =
    totals.reported ??
    (totals.cachedTokens === null || totals.promptTokens === null
      ? undefined
      : { promptTokens: totals.promptTokens, cachedTokens: totals.cachedTokens });
  if (!base || base.promptTokens === 0) return null;
  return Math.round((100 * base.cachedTokens) / base.promptTokens);
}

/**
 * The stream position of the `index`-th event of a page read from `offset`: the Harness's
 * offsets are event counts, so the position is the same however the stream is paged; an
 * offset that is not a count is kept with the index (ADR-0255).
 */
export function streamPosition(offset: string, index: number): string {
  return /^\d+$/.test(offset) ? String(Number(offset) + index) : `${offset}+${index}`;
}
