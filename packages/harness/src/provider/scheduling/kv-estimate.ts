/**
 * A request's KV estimate in tokens (issue 30 §1: its prompt + max output), before the prompt
 * is tokenized: the request's JSON at 3.5 characters a token (English prose and code under a
 * BPE vocabulary run 3.5–4.5; the lower figure errs toward holding more), plus `maxTokens`.
 * Once the endpoint has answered, the last prompt's reported size plus what was added since is
 * closer, and is used instead.
 */
export function estimateKvTokens(
  context: unknown,
  maxTokens: number | undefined,
  lastReported?: { promptTokens: number; chars: number },
): number {
  const chars = jsonLength(context);
  const prompt =
    lastReported && chars >= lastReported.chars
      ? lastReported.promptTokens + Math.ceil((chars - lastReported.chars) / 3.5)
      : Math.ceil(chars / 3.5);
  return prompt + (maxTokens ?? 0);
}

/** Characters of `value` as JSON (0 when it does not serialize). */
export function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}
