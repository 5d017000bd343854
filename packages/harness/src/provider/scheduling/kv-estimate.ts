import { createHash } from "node:crypto";
import type { SharedPrefix } from "./kv-accounting.js";

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

/** KV block size the shared prefix is rounded down to (vLLM's default; llama.cpp reuses by token, so this errs low). */
const BLOCK_TOKENS = 16;

/**
 * The prefix a request shares with the other conversations of its Agent on the endpoint
 * (ADR-0431): its system prompt + tools block, which the chat template renders before the first
 * message. `key` is their SHA-256; `tokens` their size at 3.5 characters a token, rounded down
 * to whole 16-token blocks (only full blocks are shared). `undefined` when the context carries
 * neither.
 */
export function sharedPrefixOf(context: unknown): SharedPrefix | undefined {
  if (typeof context !== "object" || context === null) return undefined;
  const { systemPrompt, tools } = context as { systemPrompt?: unknown; tools?: unknown };
  if (systemPrompt === undefined && tools === undefined) return undefined;
  const json = JSON.stringify([systemPrompt ?? null, tools ?? null]);
  const tokens = Math.floor(Math.ceil(json.length / 3.5) / BLOCK_TOKENS) * BLOCK_TOKENS;
  return { key: createHash("sha256").update(json).digest("hex"), tokens };
}
