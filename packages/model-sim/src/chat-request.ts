import { z } from "zod";
import { SimRequestError } from "./openai-error.js";

// Unknown keys are kept (vLLM accepts and ignores extras); only what model-sim reads is typed.
const TextPart = z.looseObject({ type: z.literal("text"), text: z.string() });
const Content = z.union([z.string(), z.array(TextPart)]);

const ToolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal("function"),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

const ChatMessage = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("system"), content: Content }),
  z.looseObject({ role: z.literal("developer"), content: Content }),
  z.looseObject({ role: z.literal("user"), content: Content }),
  z.looseObject({
    role: z.literal("assistant"),
    content: Content.nullish(),
    tool_calls: z.array(ToolCall).nullish(),
    reasoning_content: z.string().nullish(),
    reasoning: z.string().nullish(),
  }),
  z.looseObject({ role: z.literal("tool"), content: Content, tool_call_id: z.string() }),
]);

const ChatTool = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "a tool name matches ^[A-Za-z0-9_-]{1,64}$"),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
  }),
});

const ToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string() }) }),
]);

const ChatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ChatMessage).min(1),
  tools: z.array(ChatTool).nullish(),
  tool_choice: ToolChoice.nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  n: z.number().int().nullish(),
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
  add_generation_prompt: z.boolean().nullish(),
  cache_salt: z.string().nullish(),
});

/** One request to `POST /v1/chat/completions`, validated; unknown keys kept. @see SPEC §9 */
export type ChatRequest = z.infer<typeof ChatRequestSchema>;
/** One message of a {@link ChatRequest}. */
export type ChatMessage = z.infer<typeof ChatMessage>;
/** One tools-block entry of a {@link ChatRequest}. */
export type ChatTool = z.infer<typeof ChatTool>;

/** `["messages", 2, "content"]` → `messages[2].content`. */
function paramPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) out += typeof key === "number" ? `[${key}]` : `${out ? "." : ""}${String(key)}`;
  return out;
}

/**
 * Parse and validate a raw request body (the exact string received).
 *
 * @param raw - the body as received, byte-exact.
 * @returns the typed request.
 * @throws SimRequestError `invalid_json` (not JSON), `invalid_request` (shape; `param` names the
 *   field), `invalid_stream_options` (stream_options without stream), `unsupported_parameter`
 *   (`n` ≠ 1), `tool_choice_without_tools`.
 * @see SPEC §9
 */
export function parseChatRequest(raw: string): ChatRequest {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    throw new SimRequestError(
      "invalid_json",
      `the request body is not valid JSON: ${(err as Error).message}`,
    );
  }
  const parsed = ChatRequestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const param = paramPath(issue.path);
    throw new SimRequestError("invalid_request", `${param || "body"}: ${issue.message}`, param || null);
  }
  const request = parsed.data;
  if (request.stream_options != null && request.stream !== true) {
    throw new SimRequestError(
      "invalid_stream_options",
      "stream_options is only allowed when stream is true",
      "stream_options",
    );
  }
  if (request.n != null && request.n !== 1) {
    throw new SimRequestError("unsupported_parameter", `n=${request.n}: model-sim answers n=1 only`, "n");
  }
  const forcesTool =
    request.tool_choice != null && request.tool_choice !== "none" && request.tool_choice !== "auto";
  if (forcesTool && !request.tools?.length) {
    throw new SimRequestError(
      "tool_choice_without_tools",
      "tool_choice requires a non-empty tools list",
      "tool_choice",
    );
  }
  return request;
}

/** The text of a message content: a string, or its text parts joined with "\n" as vLLM does. */
export function contentText(content: string | readonly { text: string }[] | null | undefined): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text).join("\n");
}
