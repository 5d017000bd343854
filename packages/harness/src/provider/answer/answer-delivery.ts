import type { AssistantMessage, streamSimple } from "@mariozechner/pi-ai";
import type { AttemptValue } from "../model-attempt.js";
import type { AttemptSeen, RetryOutcome } from "../provider-retry.js";

/**
 * How one model request ends for pi (model-request.ts's last phase): the finished answer, or
 * exactly one error carrying the run's failure — and the empty answer pi stores for an error.
 * Pure.
 * @see SPEC §7.2; docs/adr/0401-provider-failures.md
 */

type PiModel = Parameters<typeof streamSimple>[0];

/** The failure a request leaves on its run (`AnswerRun.failure`). */
export type RunFailure = { type: string; message: string; cause?: string };

/** How pi's stream ends: one error (with the run's failure, if any) or the finished answer. */
export type Delivery =
  | {
      kind: "error";
      reason: "error" | "aborted";
      message: string;
      failure?: RunFailure;
      /** The last attempt, when one ended (its answer goes to the transcript as not replayed). */
      seen?: AttemptSeen<AttemptValue>;
    }
  | { kind: "answer"; message: AssistantMessage; raw: Map<number, string>; seen: AttemptSeen<AttemptValue> };

/** Decides how pi's stream ends for an outcome (pure). */
export function deliveryOf(outcome: RetryOutcome<AttemptValue>): Delivery {
  if (outcome.kind === "aborted")
    return {
      kind: "error",
      reason: "aborted",
      message: "aborted",
      ...(outcome.seen ? { seen: outcome.seen } : {}),
    };
  if (outcome.kind === "failed")
    return {
      kind: "error",
      reason: "error",
      message: outcome.message,
      failure: {
        type: outcome.type,
        message: outcome.message,
        ...(outcome.cause ? { cause: outcome.cause } : {}),
      },
      ...(outcome.seen ? { seen: outcome.seen } : {}),
    };
  const { message, raw } = outcome.seen.value;
  if (!message) return { kind: "error", reason: "error", message: "no answer", seen: outcome.seen };
  return { kind: "answer", message, raw, seen: outcome.seen };
}

/** An answer with no content: what pi stores for an aborted or failed request. */
export function emptyAssistant(
  model: PiModel,
  stopReason: "error" | "aborted",
  errorMessage: string,
): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason,
    errorMessage,
    timestamp: Date.now(),
  };
}
