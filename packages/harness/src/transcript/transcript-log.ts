import type { TranscriptEntry, TranscriptToolCall } from "@jr2/wire";
import type { RestoredTags } from "./restored-tags.js";
import { userText } from "./restored-tags.js";
import { type DiffState, diffRequest, type ToolTag, type UserTag } from "./transcript-diff.js";

/**
 * A conversation's transcript bookkeeping (issue 11 item 3, ADR-0159), one per seat: how many
 * request-body messages were streamed, the prefix last streamed, and what the Harness sent each
 * message as — a tag on each user message object it gave pi (kept as long as pi keeps the
 * message) and on each tool call id until its tool message is streamed. No message text or body
 * is kept here: the stream's events are the only copy.
 * @see SPEC §7.1; docs/adr/0159-harness-transcript-stream.md
 */

/** One conversation's transcript state. */
export interface ConversationTranscript {
  /** Tags a user message object the Harness hands pi (its prompt, nudge or a steered text). */
  tagUser(message: object, tag: UserTag): void;
  /**
   * A request body as it goes to the provider, with pi's messages it was built from (the user
   * messages among them carry the tags): the entries it adds, in order.
   */
  sent(body: unknown, contextMessages: readonly object[]): TranscriptEntry[];
  /** An answer's calls once decided: the tool message of each is a receipt or a tool result. */
  called(calls: readonly TranscriptToolCall[]): void;
  /**
   * A rebuilt conversation's messages (issue 27): each user message object pi replays is tagged,
   * and each answered tool call id, as its stored stream labelled them before the restart.
   */
  restored(messages: readonly object[], tags: RestoredTags): void;
}

/** A fresh conversation's transcript state. */
export function createConversationTranscript(): ConversationTranscript {
  const users = new WeakMap<object, UserTag>();
  const tools = new Map<string, ToolTag>();
  let state: DiffState = { sent: 0, prefix: undefined };
  return {
    tagUser: (message, tag) => users.set(message, tag),
    sent(body, contextMessages) {
      const userMessages = contextMessages.filter((m) => (m as { role?: unknown }).role === "user");
      const out = diffRequest(body, state, {
        user: (ordinal) => {
          const m = userMessages[ordinal];
          return m === undefined ? undefined : users.get(m);
        },
        tool: (id) => {
          const key = tools.has(id) ? id : [...tools.keys()].find((k) => bodyToolCallId(k) === id);
          if (key === undefined) return undefined;
          const tag = tools.get(key);
          // Consumed once streamed: a server that numbers ids per answer reuses `call_0`.
          tools.delete(key);
          return tag;
        },
      });
      state = out.state;
      return out.entries;
    },
    restored(messages, tags) {
      for (const m of messages) {
        const tag = (m as { role?: unknown }).role === "user" ? tags.users.get(userText(m)) : undefined;
        if (tag) users.set(m, tag);
      }
      for (const [id, tag] of tags.tools) tools.set(id, tag);
    },
    called(calls) {
      for (const c of calls)
        tools.set(c.id, {
          part: c.disposition === "working" ? "tool-result" : "receipt",
          name: c.name,
        });
    },
  };
}

/**
 * The id a tool call may have in the body: pi-ai (`transformMessages`, when the history came from
 * another model) shortens a `call|item` id to its sanitized `call` part, at most 40 characters.
 */
export function bodyToolCallId(id: string): string {
  if (!id.includes("|")) return id;
  return (id.split("|")[0] ?? "").replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 40);
}
