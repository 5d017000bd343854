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
  | "model_not_found";

/** A refused request: HTTP status plus the OpenAI-style body. Thrown inside model-sim only. */
export class SimRequestError extends Error {
  readonly status: number;
  readonly code: SimErrorCode;
  readonly param: string | null;

  constructor(code: SimErrorCode, message: string, param: string | null = null, status = 400) {
    super(message);
    this.name = "SimRequestError";
    this.code = code;
    this.param = param;
    this.status = status;
  }

  /** The body sent on the wire. */
  toBody(): OpenAIErrorBody {
    const type = this.status === 404 ? "not_found_error" : "invalid_request_error";
    return { error: { message: this.message, type, param: this.param, code: this.code } };
  }
}
