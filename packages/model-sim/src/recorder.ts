/** OpenAI `usage` as model-sim reports it. Units: tokens. @see SPEC §9 */
export interface SimUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

/**
 * One `POST /v1/chat/completions` as received — refused ones included.
 *
 * - `seq`: 1, 2, … in arrival order (restarts after a reset);
 * - `receivedAt`: ISO-8601 time of arrival;
 * - `model`: the body's `model` when it could be read, else null;
 * - `raw`: the body byte-exact, as the string received;
 * - `status`: the HTTP status answered (200, 400, 404);
 * - `usage`: the usage reported (null for a refused request);
 * - `error`: the refusal code (null when answered).
 *
 * @see SPEC §9
 */
export interface RecordedRequest {
  seq: number;
  receivedAt: string;
  model: string | null;
  raw: string;
  status: number;
  usage: SimUsage | null;
  error: string | null;
}

/** Totals over the recorded requests. Units: requests and tokens; `cachedRatio` in [0, 1]. */
export interface SimStats {
  requests: number;
  refused: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  /** cachedTokens / promptTokens, 0 when no prompt was counted. */
  cachedRatio: number;
}

/** Keeps every request in arrival order. */
export class Recorder {
  #entries: RecordedRequest[] = [];

  /** Append one request; `seq` is assigned here. */
  record(entry: Omit<RecordedRequest, "seq">): RecordedRequest {
    const recorded = { seq: this.#entries.length + 1, ...entry };
    this.#entries.push(recorded);
    return recorded;
  }

  /** A copy of the recorded requests, oldest first. */
  list(): RecordedRequest[] {
    return [...this.#entries];
  }

  /** Forget every recorded request (the totals follow). */
  reset(): void {
    this.#entries = [];
  }

  /** Totals over what is recorded now. */
  stats(): SimStats {
    const totals = { requests: 0, refused: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0 };
    for (const entry of this.#entries) {
      totals.requests++;
      if (!entry.usage) {
        totals.refused++;
        continue;
      }
      totals.promptTokens += entry.usage.prompt_tokens;
      totals.cachedTokens += entry.usage.prompt_tokens_details.cached_tokens;
      totals.completionTokens += entry.usage.completion_tokens;
    }
    const cachedRatio = totals.promptTokens === 0 ? 0 : totals.cachedTokens / totals.promptTokens;
    return { ...totals, cachedRatio };
  }
}
