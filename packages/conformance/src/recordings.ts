/**
 * What the tier records from the outside: model-sim's request log (`GET /_sim/requests`) and
 * the services' HTTP answers.
 * @see SPEC §9, §10
 */

/** One request model-sim received (`raw` is the body byte-exact). */
export interface RecordedRequest {
  seq: number;
  model: string;
  raw: string;
  status: number;
  usage?: { prompt_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } | null;
  error?: unknown;
}

/**
 * The raw bodies of the answered requests for one model name, oldest first. The tier gives
 * each conversation under test its own model name (a model-sim policy), so a model name names
 * a conversation; refused requests (status ≠ 200) are left out.
 */
export function conversationOf(requests: readonly RecordedRequest[], model: string): string[] {
  return [...requests]
    .filter((r) => r.model === model && r.status === 200)
    .sort((a, b) => a.seq - b.seq)
    .map((r) => r.raw);
}

/** The distinct model names in the log, in order of first request. */
export function modelsOf(requests: readonly RecordedRequest[]): string[] {
  return [...new Set([...requests].sort((a, b) => a.seq - b.seq).map((r) => r.model))];
}
