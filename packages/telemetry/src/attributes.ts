import { type Attributes, type Span, SpanStatusCode } from "@opentelemetry/api";
import { ATTR_ERROR_TYPE } from "@opentelemetry/semantic-conventions";

/**
 * The span names and attribute names both services use (issue 11 "Telemetry shape",
 * ADR-0420). The `gen_ai.*` names are the OpenTelemetry GenAI semantic conventions; they live
 * in the conventions' *incubating* entry, which may rename between minor releases, so they are
 * copied here (as the conventions' README advises) and a test pins them to the installed
 * `@opentelemetry/semantic-conventions/incubating`. `jr2.*` names are jr2's own.
 */

/** GenAI semantic-convention attribute names (OpenTelemetry semconv ≥ 1.37). */
export const GEN_AI = {
  /** `chat` for every model request jr2 makes. */
  OPERATION_NAME: "gen_ai.operation.name",
  /** The serving stack when known (`openai` for an OpenAI-compatible endpoint). */
  PROVIDER_NAME: "gen_ai.provider.name",
  /** The model id the request named (the model entry's `id`). */
  REQUEST_MODEL: "gen_ai.request.model",
  /** The model id the server answered with, when it said. */
  RESPONSE_MODEL: "gen_ai.response.model",
  REQUEST_MAX_TOKENS: "gen_ai.request.max_tokens",
  REQUEST_TEMPERATURE: "gen_ai.request.temperature",
  /** Prompt tokens, cached ones included; omitted when the server did not report them. */
  USAGE_INPUT_TOKENS: "gen_ai.usage.input_tokens",
  /** Prompt tokens served from the prefix cache; omitted when not reported. */
  USAGE_CACHED_INPUT_TOKENS: "gen_ai.usage.cache_read.input_tokens",
  /** Completion tokens; omitted when not reported. */
  USAGE_OUTPUT_TOKENS: "gen_ai.usage.output_tokens",
  /** An array of the answer's finish reasons (one: jr2 asks for one choice). */
  RESPONSE_FINISH_REASONS: "gen_ai.response.finish_reasons",
  /** Content: only with `JR2_OTEL_CAPTURE_CONTENT=true`. */
  INPUT_MESSAGES: "gen_ai.input.messages",
  /** Content: only with `JR2_OTEL_CAPTURE_CONTENT=true`. */
  OUTPUT_MESSAGES: "gen_ai.output.messages",
  /** The conversation (jr2: the iid). Content: only with `JR2_OTEL_CAPTURE_CONTENT=true`. */
  CONVERSATION_ID: "gen_ai.conversation.id",
} as const;

/** The GenAI operation jr2's model requests are. */
export const GEN_AI_OPERATION_CHAT = "chat";

/** jr2's own span attribute names. */
export const JR2_ATTR = {
  WORKFLOW: "jr2.workflow",
  /** The Turn's state path, dot-joined (`review.coding`). */
  STATE: "jr2.state",
  AGENT: "jr2.agent",
  RUN_ID: "jr2.run_id",
  TURN_ID: "jr2.turn_id",
  SUBMISSION_ID: "jr2.submission_id",
  /** `task` or `nudge`. */
  SUBMISSION_KIND: "jr2.submission.kind",
  /** A Submission's settlement, a Turn's or a run's outcome. */
  OUTCOME: "jr2.outcome",
  /** The model entry's name in `JR2_MODELS` (the request's `gen_ai.request.model` is its `id`). */
  MODEL_ENTRY: "jr2.model_entry",
  /** Attempts a model request took (1 without a retry). */
  ATTEMPTS: "jr2.attempts",
  /** Usage fields the server did not report (ADR-0400), e.g. `["cachedTokens"]`. */
  USAGE_UNREPORTED: "jr2.usage.unreported",
  PICK_NAME: "jr2.pick.name",
  /** The refusal class of a pick (absent when delivered). */
  PICK_REFUSAL: "jr2.pick.refusal",
  PICK_MOVED: "jr2.pick.moved",
  /** The conversation's iid. Content: only with `JR2_OTEL_CAPTURE_CONTENT=true`. */
  IID: "jr2.iid",
} as const;

/** Span names: one trace per Turn (ADR-0420). */
export const SPAN_NAMES = {
  /** The Orchestrator's root span of a Turn. */
  TURN: "jr2.turn",
  /** The Harness's span of one Submission, a child of the Turn through `traceparent`. */
  SUBMISSION: "jr2.submission",
  /** One pick as the Orchestrator decided it. */
  PICK: "jr2.pick",
} as const;

/** The GenAI span name of a model request: `chat <model id>`. */
export function modelRequestSpanName(modelId: string): string {
  return `${GEN_AI_OPERATION_CHAT} ${modelId}`;
}

/** One model request's usage; `null` where the server did not report the field (ADR-0400). */
export interface SpanUsage {
  promptTokens: number | null;
  cachedTokens: number | null;
  completionTokens: number | null;
}

/**
 * The `gen_ai.usage.*` attributes of a model request, each omitted when not reported — a
 * missing count is unknown, never 0.
 * @example usageAttributes({ promptTokens: 568, cachedTokens: null, completionTokens: 8 })
 *   // → { "gen_ai.usage.input_tokens": 568, "gen_ai.usage.output_tokens": 8 }
 */
export function usageAttributes(u: SpanUsage): Attributes {
  const out: Attributes = {};
  if (u.promptTokens !== null) out[GEN_AI.USAGE_INPUT_TOKENS] = u.promptTokens;
  if (u.cachedTokens !== null) out[GEN_AI.USAGE_CACHED_INPUT_TOKENS] = u.cachedTokens;
  if (u.completionTokens !== null) out[GEN_AI.USAGE_OUTPUT_TOKENS] = u.completionTokens;
  return out;
}

/** Longest content attribute value (characters); longer values are cut and say so. */
export const CONTENT_ATTRIBUTE_MAX = 32 * 1024;

/**
 * Content attributes (message text, arguments, results, iids) — `{}` unless content capture is
 * on (`JR2_OTEL_CAPTURE_CONTENT=true`); each value is cut at {@link CONTENT_ATTRIBUTE_MAX}
 * characters with a `…[cut, N characters]` mark. Undefined values are left out.
 */
export function contentAttributes(
  capture: { captureContent: boolean },
  values: Record<string, string | undefined>,
): Attributes {
  if (!capture.captureContent) return {};
  const out: Attributes = {};
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue;
    out[key] =
      value.length > CONTENT_ATTRIBUTE_MAX
        ? `${value.slice(0, CONTENT_ATTRIBUTE_MAX)}…[cut, ${value.length} characters]`
        : value;
  }
  return out;
}

/**
 * Marks `span` failed: `error.type` (stable semconv) and an ERROR status, both `errorType` — a
 * jr2 failure type such as `provider` or `stream-incomplete`, never a server's text (it may
 * quote the prompt).
 */
export function spanFailed(span: Span, errorType: string): void {
  span.setAttribute(ATTR_ERROR_TYPE, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
}
