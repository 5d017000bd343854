import type { createAssistantMessageEventStream, streamSimple } from "@mariozechner/pi-ai";
import type { ModelRequestObservation } from "../telemetry/submission-telemetry.js";
import type { AnswerReport } from "../transcript/transcript-answer.js";
import type { NeverRun } from "./answer/answer-ingestion.js";
import type { EndpointLimiter } from "./limiter.js";
import type { AttemptRequest } from "./model-attempt.js";
import type { ResolvedRetryPolicy } from "./models.js";
import type { RequestSite } from "./provider-errors.js";
import type { RetryNotice } from "./provider-retry.js";
import type { ReportedUsage } from "./provider-usage.js";
import type { LintMode } from "./replay/replay-lint.js";
import type { ConversationKv } from "./scheduling/conversation-kv.js";

/**
 * The shapes one model request's phases share (model-request.ts, request-open.ts): what the
 * request needs from its run and from the seat, and the request in flight.
 * @see SPEC §7.2
 */

export type PiModel = Parameters<typeof streamSimple>[0];
export type PiContext = Parameters<typeof streamSimple>[1];
/** What one answer's request needs from its run. */
export interface AnswerRun {
  /** The model entry's name, for messages. */
  entry: string;
  policy: ResolvedRetryPolicy;
  apiKey: string;
  aborted: boolean;
  neverRun: Map<string, NeverRun>;
  /** Arguments as parsed from the model's bytes, by tool-call id (pi's are repaired). */
  parsedArgs: Map<string, unknown>;
  /** Every tool-call id the conversation holds (the seat's set: ids are unique per conversation). */
  callIds: Set<string>;
  failure: { type: string; message: string; cause?: string } | undefined;
  usage(u: ReportedUsage & { finishReason?: string }): void;
  retry(n: RetryNotice): void;
  /** The replay-lint repaired a request (production only). */
  lintRepaired(problems: string[]): void;
  /** A request body as it goes to the provider, with pi's messages it was built from (ADR-0159). */
  requestSent(body: unknown, contextMessages: readonly object[]): void;
  /** The conversation's place in its endpoint's KV working set; absent: scheduling off. */
  kv?: ConversationKv | undefined;
  /** An attempt's answer: the one pi is given (`replayed`) or one the conversation never saw. */
  answered(report: AnswerReport): void;
}

export interface StreamFnConfig {
  limiter: EndpointLimiter;
  temperature: number | undefined;
  /** The run in progress, or `undefined` between runs. */
  current(): AnswerRun | undefined;
  lintMode?: LintMode;
  /**
   * Shapes each request body before the replay-lint (e.g. a per-template reasoning-echo policy);
   * it must be a pure function of the body, so every request stays a byte extension.
   */
  shapePayload?: (params: Record<string, unknown>) => void;
}

export type AnswerStream = ReturnType<typeof createAssistantMessageEventStream>;

/** The bytes a request sends and the lint's refusal, set once by the first attempt's payload hook. */
export interface PayloadState {
  /** The first attempt's body, as sent; every retry sends it again. */
  bytes: string | undefined;
  lintError: string | undefined;
}

/** One model request in flight: what every phase reads. */
export interface RequestState {
  cfg: StreamFnConfig;
  run: AnswerRun;
  model: PiModel;
  out: AnswerStream;
  signal: AbortSignal | undefined;
  site: RequestSite;
  payload: PayloadState;
  attempt: AttemptRequest;
  /** Attempts started so far (the transcript's `attempt`). */
  tries: number;
  /** The request's span and counters (ADR-0420); inert outside a Submission's telemetry scope. */
  observed: ModelRequestObservation;
}
