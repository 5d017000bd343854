/**
 * OpenAI-style error bodies, the shape vLLM and OpenAI answer a refused request with.
 *
 * Body: `{ error: { message, type, param, code } }`. `code` is a stable snake_case name a
 * test branches on (never the message text); `param` names the offending field path
 * (`messages[3].tool_calls[0].function.arguments`) or is null.
 *
 * @see SPEC §9
 */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

/**
 * vLLM's own top-level error body (its `ErrorResponse`): `{ object: "error", message, type,
 * param, code }` with `code` the HTTP status — e.g. its context-length 400
 * `{ object: "error", message: "This model's maximum context length is …", type:
 * "BadRequestError", param: null, code: 400 }`. The fault policies answer in this shape.
 */
export interface VllmErrorBody {
  object: "error";
  message: string;
  type: string;
  param: string | null;
  code: number;
}

/** The refusal codes model-sim answers with; each is documented in the README. */
export type SimErrorCode =
  | "invalid_json"
  | "invalid_request"
  | "invalid_tool_call_arguments"
  | "duplicate_tool_call_id"
  | "unknown_tool_call_id"
  | "duplicate_tool_result"
  | "tool_call_without_result"
  | "tool_choice_without_tools"
  | "invalid_stream_options"
  | "unsupported_parameter"
  | "context_length_exceeded"
  | "model_not_found"
  | "model_loading"
  | "rate_limited";

/** vLLM's error `type` per HTTP status, as its top-level body names it. */
const VLLM_TYPES: Record<number, string> = {
  400: "BadRequestError",
  404: "NotFoundError",
  429: "RateLimitError",
  503: "ServiceUnavailableError",
};

/** A refused request: HTTP status plus the OpenAI-style body. Thrown inside model-sim only. */
export class SimRequestError extends Error {
  readonly status: number;
  readonly code: SimErrorCode;
  readonly param: string | null;
  /** Which body shape goes on the wire: OpenAI's `{ error }` or vLLM's top-level one. */
  readonly shape: "openai" | "vllm";
  /** Extra response headers (e.g. `retry-after`). */
  readonly headers: Record<string, string>;

  constructor(
    code: SimErrorCode,
    message: string,
    param: string | null = null,
    status = 400,
    options: { shape?: "openai" | "vllm"; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = "SimRequestError";
    this.code = code;
    this.param = param;
    this.status = status;
    this.shape = options.shape ?? "openai";
    this.headers = options.headers ?? {};
  }

  /** The body sent on the wire, in this error's shape. */
  toBody(): OpenAIErrorBody | VllmErrorBody {
    if (this.shape === "vllm") {
      const type = VLLM_TYPES[this.status] ?? "InternalServerError";
      return { object: "error", message: this.message, type, param: this.param, code: this.status };
    }
    const type = this.status === 404 ? "not_found_error" : "invalid_request_error";
    return { error: { message: this.message, type, param: this.param, code: this.code } };
  }
}
