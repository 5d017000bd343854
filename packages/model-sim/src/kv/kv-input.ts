import type { SimUsage } from "../recorder.js";
import type { KvSequenceInput } from "./kv-engine.js";

/**
 * What the time model needs of one answered request: its prompt, the part found cached on
 * arrival, and the tokens it decodes (at least 1: the first token is always decoded). A
 * preempted sequence is recomputed from its whole prompt (no relookup on the live path: under
 * the pressure that preempts, its freed blocks are the first evicted).
 */
export function kvInput(usage: SimUsage): KvSequenceInput {
  return {
    promptTokens: usage.prompt_tokens,
    cachedTokens: usage.prompt_tokens_details.cached_tokens,
    outputTokens: Math.max(usage.completion_tokens, 1),
  };
}
