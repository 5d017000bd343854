import type { UsageField } from "@jr2/wire";
import type { FetchProbe } from "./fetch-probe.js";

/**
 * One model request's usage as the server reported it (issue 10 §2, case C8; ADR-0400). A field
 * the server did not report is named in `unreported` and carried as a placeholder `0`, never a
 * measured 0: the cache hit rate is the number jr2 exists to protect.
 * - `usage.prompt_tokens_details.cached_tokens` is the cached count; without it (vLLM without
 *   `--enable-prompt-tokens-details`) llama-server's `timings.cache_n` is read, else unreported.
 * - No usage object at all: llama-server's `timings` (`prompt_n + cache_n`, `cache_n`,
 *   `predicted_n`) when present, else all three unreported.
 */
export interface ReportedUsage {
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  unreported: UsageField[];
  /** Fields the server reported impossibly (cached over prompt); also in `unreported` (issue 25 §6). */
  misreported?: UsageField[];
}

/** Reads the usage the probe saw. */
export function reportedUsage(probe: Pick<FetchProbe, "usage" | "timings">): ReportedUsage {
  const u = probe.usage;
  const t = probe.timings;
  const cacheN = count(t?.cache_n);
  if (u) {
    const details = u.prompt_tokens_details as Record<string, unknown> | undefined | null;
    const fields = {
      promptTokens: count(u.prompt_tokens),
      cachedTokens: count(details?.cached_tokens) ?? count(u.prompt_cache_hit_tokens) ?? cacheN,
      completionTokens: count(u.completion_tokens),
    };
    return withPlaceholders(clampCached(fields));
  }
  const promptN = count(t?.prompt_n);
  return withPlaceholders({
    promptTokens: promptN !== undefined && cacheN !== undefined ? promptN + cacheN : undefined,
    cachedTokens: cacheN,
    completionTokens: count(t?.predicted_n),
  });
}

type Fields = Record<UsageField, number | undefined>;

/**
 * More cached tokens than prompt tokens is impossible (a server seen reporting `cached 150` of
 * 100): the number is not shown as a hit rate over 100 % — it reads as unreported, named
 * `misreported`.
 */
function clampCached(f: Fields): Fields & { misreported?: UsageField[] } {
  if (f.cachedTokens === undefined || f.promptTokens === undefined || f.cachedTokens <= f.promptTokens)
    return f;
  return { ...f, cachedTokens: undefined, misreported: ["cachedTokens"] };
}

const count = (v: unknown): number | undefined =>
  // Safe integers only: a hostile 1e300 would pass `isInteger` and then fail the stream's
  // response serialization, so no page of the conversation's stream could be read again.
  typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : undefined;

function withPlaceholders(f: Fields & { misreported?: UsageField[] }): ReportedUsage {
  const fields: UsageField[] = ["promptTokens", "cachedTokens", "completionTokens"];
  const unreported = fields.filter((k) => f[k] === undefined);
  return {
    ...(f.misreported ? { misreported: f.misreported } : {}),
    promptTokens: f.promptTokens ?? 0,
    cachedTokens: f.cachedTokens ?? 0,
    completionTokens: f.completionTokens ?? 0,
    unreported,
  };
}
