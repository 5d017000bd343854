import type { MessagePart, Notice, TranscriptEntry } from "@jr2/wire";

/**
 * The Turn transcript's request side (issue 11 item 3, ADR-0159): a request body as it goes to
 * the provider, diffed against what the conversation already streamed — the `prefix` (system
 * prompt and tools block) once, then each message not streamed before, its exact JSON kept. What
 * a message is to a reader (its `part`) comes from what the Harness itself sent (a tag per user
 * message, a tag per tool call), never from reading its text. Pure.
 * @see SPEC §7.1, §7.2; docs/adr/0159-harness-transcript-stream.md
 */

/** What the Harness sent a user message as: the Submission's prompt or nudge, or a steered text. */
export interface UserTag {
  part: Extract<MessagePart, "prompt" | "nudge" | "restatement" | "continue">;
  /** The Submission's structured notices (prompt and nudge only). */
  notices?: Notice[];
}

/** What a tool-role message answers: a Working tool's `tool-result` or a Harness `receipt`. */
export interface ToolTag {
  part: Extract<MessagePart, "tool-result" | "receipt">;
  name: string;
}

/** What a conversation has streamed so far: body messages covered (system included) and its prefix. */
export interface DiffState {
  sent: number;
  prefix: { system: string; toolsJson: string } | undefined;
}

/** Where a message's part is looked up. */
export interface DiffLookups {
  /** The tag of the conversation's `ordinal`-th user message (from 0), if the Harness tagged it. */
  user(ordinal: number): UserTag | undefined;
  /** The tag of the tool call `toolCallId` answers. */
  tool(toolCallId: string): ToolTag | undefined;
}

type BodyMessage = Record<string, unknown>;

/**
 * The entries a request body adds to the conversation's transcript, and the state after it.
 * A body with fewer messages than already streamed adds none (a history never shrinks; if it
 * did, nothing is streamed twice). A body that is not a Chat Completions body adds none.
 */
export function diffRequest(
  body: unknown,
  state: DiffState,
  lookups: DiffLookups,
): { entries: TranscriptEntry[]; state: DiffState } {
  if (typeof body !== "object" || body === null) return { entries: [], state };
  const { messages, tools } = body as { messages?: unknown; tools?: unknown };
  if (!Array.isArray(messages)) return { entries: [], state };
  const entries: TranscriptEntry[] = [];
  const prefix = prefixOf(messages, tools);
  let next = state.prefix;
  if (!state.prefix || state.prefix.system !== prefix.system || state.prefix.toolsJson !== prefix.toolsJson) {
    entries.push({ kind: "prefix", ...prefix });
    next = prefix;
  }
  let users = 0;
  messages.forEach((raw, index) => {
    if (typeof raw !== "object" || raw === null) return;
    const m = raw as BodyMessage;
    const entry = index >= state.sent ? messageEntry(m, users, lookups) : undefined;
    if (m.role === "user" && !isAttachment(m)) users++;
    if (entry) entries.push(entry);
  });
  return { entries, state: { sent: Math.max(state.sent, messages.length), prefix: next } };
}

/** The system prompt (a leading `system` or `developer` message) and the tools block's exact JSON. */
function prefixOf(messages: unknown[], tools: unknown): { system: string; toolsJson: string } {
  const first = messages[0] as BodyMessage | undefined;
  const system = first && isSystem(first) ? textOf(first.content) : "";
  return { system, toolsJson: JSON.stringify(tools ?? []) };
}

const isSystem = (m: BodyMessage) => m.role === "system" || m.role === "developer";

/**
 * pi-ai's user message carrying a tool result's images (it never comes from the Harness): an
 * `image_url` part is something no Harness-written user message holds.
 */
export function isAttachment(m: BodyMessage): boolean {
  return Array.isArray(m.content) && m.content.some((c) => (c as { type?: unknown })?.type === "image_url");
}

/** One message's entry; `undefined` for the system prompt (it is the prefix) and unknown roles. */
function messageEntry(
  m: BodyMessage,
  userOrdinal: number,
  lookups: DiffLookups,
): TranscriptEntry | undefined {
  const json = JSON.stringify(m);
  const text = textOf(m.content);
  if (m.role === "user") {
    const tag = isAttachment(m) ? undefined : lookups.user(userOrdinal);
    return {
      kind: "message",
      role: "user",
      part: tag?.part ?? "other",
      text,
      ...(tag?.notices ? { notices: tag.notices } : {}),
      json,
    };
  }
  if (m.role === "assistant") return { kind: "message", role: "assistant", part: "answer", text, json };
  if (m.role === "tool") {
    const id = typeof m.tool_call_id === "string" ? m.tool_call_id : undefined;
    const tag = id === undefined ? undefined : lookups.tool(id);
    return {
      kind: "message",
      role: "tool",
      part: tag?.part ?? "other",
      text,
      ...(id !== undefined ? { toolCallId: id } : {}),
      ...(tag ? { toolName: tag.name } : {}),
      json,
    };
  }
  return undefined;
}

/** A Chat Completions `content`: a string as is, text parts joined, anything else "". */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((c): c is { type: "text"; text: string } => c?.type === "text" && typeof c.text === "string")
    .map((c) => c.text)
    .join("");
}
