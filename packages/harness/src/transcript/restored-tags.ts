import type { StreamEvent } from "@jr2/wire";
import { isAttachment, type ToolTag, textOf, type UserTag } from "./transcript-diff.js";

/**
 * What a rebuilt conversation's messages were sent as (issue 27, ADR-0175): read back from the
 * `transcript` events of its stored stream, so the first request after a Harness restart —
 * which streams the rebuilt history again — labels each message as it was labelled before
 * (prompt, nudge, receipt, tool result…) instead of `other`. User messages are matched by their
 * text (the very message the Harness tagged then; a text sent twice carries its last tag), tool
 * messages by the tool call id they answer (from the answers' decided calls and the tool
 * messages already streamed). The labels still come from what the Harness sent,
 * never from reading a text for its meaning.
 * @see docs/adr/0159-harness-transcript-stream.md
 */
export interface RestoredTags {
  /** User message text → its tag. */
  users: Map<string, UserTag>;
  /** Tool call id as the body carried it → the tag of the tool message answering it. */
  tools: Map<string, ToolTag>;
}

/** The tags of the messages `events` (a stored stream log) streamed; empty maps when none. */
export function restoredTags(events: readonly StreamEvent[]): RestoredTags {
  const users = new Map<string, UserTag>();
  const tools = new Map<string, ToolTag>();
  for (const event of events) {
    if (event.type !== "transcript") continue;
    const { entry } = event;
    // An answer's calls as decided (what `called` tagged): the last step's receipt was never in
    // a request before the restart, so only its answer says what it is.
    if (entry.kind === "answer" && entry.replayed)
      for (const c of entry.toolCalls)
        tools.set(c.id, { part: c.disposition === "working" ? "tool-result" : "receipt", name: c.name });
    if (entry.kind !== "message") continue;
    if (entry.role === "user" && isUserTag(entry.part) && !isAttachment(parsed(entry.json)))
      users.set(entry.text, { part: entry.part, ...(entry.notices ? { notices: entry.notices } : {}) });
    if (entry.role === "tool" && entry.toolCallId && entry.toolName && isToolTag(entry.part))
      tools.set(entry.toolCallId, { part: entry.part, name: entry.toolName });
  }
  return { users, tools };
}

/** The text a pi user message is matched by (its content's text, as the body would carry it). */
export function userText(message: object): string {
  return textOf((message as { content?: unknown }).content);
}

const isUserTag = (part: string): part is UserTag["part"] =>
  part === "prompt" || part === "nudge" || part === "restatement" || part === "continue";
const isToolTag = (part: string): part is ToolTag["part"] => part === "tool-result" || part === "receipt";

function parsed(json: string): Record<string, unknown> {
  try {
    const value = JSON.parse(json) as unknown;
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
