import { estimateKvTokens, jsonLength, sharedPrefixOf } from "./kv-estimate.js";
import type { EnterOutcome, QueuedNotice, WorkingSet } from "./working-set.js";

/**
 * One conversation's side of its endpoint's working set, handed to each model request of a
 * Submission (model-attempt.ts): `enter` before the endpoint limiter, `ended` after the
 * attempt, `observe` with the answer's usage (the budget adapts from continuations' hit ratios).
 * @see docs/adr/0430-kv-scheduling.md
 */
export interface ConversationKv {
  /** Waits for the conversation's place in the set; `aborted` when `signal` fired first. */
  enter(context: unknown, maxTokens: number | undefined, signal?: AbortSignal): Promise<EnterOutcome>;
  /** The attempt ended. */
  ended(): void;
  /** The request's usage, when the endpoint reported it. */
  observe(promptTokens: number, cachedTokens: number): void;
}

/**
 * @param onQueued - a request of this Submission waits (the `queued` stream event).
 * @param onWaited - a wait ended with the conversation in the set (the Turn's waited time).
 */
export function conversationKv(
  set: WorkingSet,
  conversation: string,
  onQueued: (n: QueuedNotice) => void,
  onWaited: (ms: number) => void,
): ConversationKv {
  let last: { promptTokens: number; chars: number } | undefined;
  let chars = 0;
  let continuation = false;
  return {
    async enter(context, maxTokens, signal) {
      chars = jsonLength(context);
      continuation = set.has(conversation);
      const outcome = await set.enter(
        conversation,
        estimateKvTokens(context, maxTokens, last),
        signal,
        onQueued,
        sharedPrefixOf(context),
      );
      if (outcome.kind === "entered" && outcome.waitedMs > 0) onWaited(outcome.waitedMs);
      return outcome;
    },
    ended: () => set.ended(conversation),
    observe(promptTokens, cachedTokens) {
      if (continuation && last) set.budget.observeContinuation(last.promptTokens, cachedTokens);
      last = { promptTokens, chars };
    },
  };
}
