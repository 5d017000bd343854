import { arrayElements, JsonScanError, type Member, objectMembers, type Span } from "./json-scan.js";

/**
 * One chat-completions request body as the model server received it: the raw text, the raw
 * spans of its top-level fields and of each message, and the parsed messages for reading
 * (never for byte comparison).
 * @see SPEC §9 (model-sim records bodies byte-exact), §10
 */
export interface RequestBody {
  raw: string;
  /** Top-level members in body order. */
  members: Member[];
  /** The `messages` member. */
  messages: Member;
  /** One span per message, in order. */
  messageSpans: Span[];
  /** The parsed messages. */
  parsed: ChatMessage[];
}

/** An OpenAI-style chat message, as far as the tier reads it. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: unknown } }>;
  tool_call_id?: string;
}

/**
 * Scans a raw body. Data, not throws: a body the tier cannot read is a failed contract.
 * @returns the body, or the reason it is not a chat request (not JSON, no `messages` array).
 */
export function readRequestBody(
  raw: string,
): { ok: true; body: RequestBody } | { ok: false; reason: string } {
  try {
    const members = objectMembers(raw);
    const messages = members.find((m) => m.key === "messages");
    if (!messages) return { ok: false, reason: "it has no top-level `messages` field" };
    const messageSpans = arrayElements(raw, messages.valueSpan);
    const parsed = messageSpans.map((s) => JSON.parse(raw.slice(s.start, s.end)) as ChatMessage);
    return { ok: true, body: { raw, members, messages, messageSpans, parsed } };
  } catch (error) {
    const why = error instanceof JsonScanError ? error.message : String(error);
    return { ok: false, reason: `it is not a JSON object with a \`messages\` array (${why})` };
  }
}

/** Index just after the last message (just after `[` when there are none). */
export function endOfLastMessage(body: RequestBody): number {
  const last = body.messageSpans.at(-1);
  return last ? last.end : body.raw.indexOf("[", body.messages.valueSpan.start) + 1;
}

/** The text of a message's content: a string, or its text parts joined with "\n" (as vLLM does). */
export function contentText(message: ChatMessage): string {
  const c = message.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) {
    return c
      .map((part) =>
        part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string"
          ? (part as { text: string }).text
          : "",
      )
      .join("\n");
  }
  return "";
}

/** The named top-level member, if present. */
export function memberOf(body: RequestBody, key: string): Member | undefined {
  return body.members.find((m) => m.key === key);
}
