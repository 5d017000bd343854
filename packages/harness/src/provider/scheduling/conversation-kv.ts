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
 * @param onWaited - a request that waited stopped waiting (ms, possibly 0): it entered the set,
 *   or its wait was aborted (a cancel, the Orchestrator's abort after a pick, the deadline).
 *   Either way the Turn waited that long, and a `queued` line on the feed must be followed by
 *   the Turn's wait in all: before, only entered waits over 0 ms were told, so a Submission
 *   whose only wait ended by an abort (or in the same millisecond) showed a `queued` line and
 *   never how long it waited (fresh-clone CI, kv-scheduling.test.ts).
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
      let queued = false;
      const outcome = await set.enter(
        conversation,
        estimateKvTokens(context, maxTokens, last),
        signal,
        (n) => {
          queued = true;
          onQueued(n);
        },
        sharedPrefixOf(context),
      );
      if (queued) onWaited(outcome.waitedMs);
      return outcome;
    },
    ended: () => set.ended(conversation),
    observe(promptTokens, cachedTokens) {
      if (continuation && last) set.budget.observeContinuation(last.promptTokens, cachedTokens);
      last = { promptTokens, chars };
    },
  };
}
