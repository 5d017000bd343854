/**
 * Token figures as the console shows them (ADR-0400): a count the provider did not report reads
 * "unknown", never 0; the cache hit rate is over the requests that reported both counts.
 */
import type { UsageTotals } from "@jr2/wire";

/** `cachedTokens / promptTokens` over the reporting requests, as a whole percent, or "unknown". */
export function cacheRate(usage: UsageTotals): string {
  const r = usage.reported;
  if (!r || r.promptTokens === 0) return "unknown";
  return `${Math.round((r.cachedTokens / r.promptTokens) * 100)}%`;
}
