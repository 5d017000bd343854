/**
 * A rebuilt conversation's transcript labels (issue 27, ADR-0175): after a Harness restart the
 * first request streams the rebuilt history again; each replayed message is labelled as the
 * stored stream labelled it before (the prompt, a nudge, a tool result, a receipt — the last
 * step's receipt from its answer's decided calls, since no request carried it yet), not `other`.
 */
import type { StreamEvent, TranscriptEntry } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { restoredTags } from "../../src/transcript/restored-tags.js";
import { createConversationTranscript } from "../../src/transcript/transcript-log.js";

const TOOLS = [{ type: "function", function: { name: "finish", parameters: {} } }];
const ev = (entry: TranscriptEntry): StreamEvent => ({ type: "transcript", submissionId: "s1", entry });
const msg = (role: "user" | "tool", part: "prompt" | "nudge" | "tool-result", text: string, extra = {}) =>
  ev({ kind: "message", role, part, text, json: JSON.stringify({ role, content: text }), ...extra });
const answer = (id: string, name: string, disposition: "pick" | "working") =>
  ev({
    kind: "answer",
    model: "coder",
    text: "",
    toolCalls: [{ id, name, rawArguments: "{}", disposition }],
    usage: null,
    replayed: true,
  });

/** The stream log before the restart: prompt, a Working tool's step, a nudge, then a pick's answer. */
const STORED: StreamEvent[] = [
  { type: "submission-started", submissionId: "s1", kind: "task" },
  msg("user", "prompt", "Write hello.js", { notices: [{ type: "conversation-new" }] }),
  answer("call_a", "read_file", "working"),
  msg("tool", "tool-result", "file body", { toolCallId: "call_a", toolName: "read_file" }),
  msg("user", "nudge", "Pick one of: finish."),
  answer("call_b", "finish", "pick"),
];

// pi's messages as the store replays them (parsed JSON: no tag on any object).
const replayed = [
  { role: "user", content: [{ type: "text", text: "Write hello.js" }], timestamp: 1 },
  { role: "assistant", content: [{ type: "toolCall", id: "call_a", name: "read_file", arguments: {} }] },
  {
    role: "toolResult",
    toolCallId: "call_a",
    toolName: "read_file",
    content: [{ type: "text", text: "file body" }],
  },
  { role: "user", content: "Pick one of: finish.", timestamp: 2 },
  { role: "assistant", content: [{ type: "toolCall", id: "call_b", name: "finish", arguments: {} }] },
  {
    role: "toolResult",
    toolCallId: "call_b",
    toolName: "finish",
    content: [{ type: "text", text: "Delivered." }],
  },
];
// The first request after the restart, as pi-ai builds it.
const body = {
  model: "m",
  tools: TOOLS,
  messages: [
    { role: "system", content: "standing" },
    { role: "user", content: [{ type: "text", text: "Write hello.js" }] },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_a", type: "function", function: { name: "read_file", arguments: "{}" } }],
    },
    { role: "tool", content: "file body", tool_call_id: "call_a" },
    { role: "user", content: "Pick one of: finish." },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_b", type: "function", function: { name: "finish", arguments: "{}" } }],
    },
    { role: "tool", content: "Delivered.", tool_call_id: "call_b" },
    { role: "user", content: "Fix the review's findings." },
  ],
};

describe("a rebuilt conversation's transcript labels", () => {
  it("labels each replayed message as the stored stream did; the new prompt is the Submission's own", () => {
    const transcript = createConversationTranscript();
    transcript.restored(replayed, restoredTags(STORED));
    const fresh = { role: "user", content: "Fix the review's findings." };
    transcript.tagUser(fresh, { part: "prompt" });
    const entries = transcript.sent(body, [...replayed, fresh]);
    const labels = entries.flatMap((e) => (e.kind === "message" ? [`${e.role}/${e.part}`] : []));
    expect(labels).toEqual([
      "user/prompt",
      "assistant/answer",
      "tool/tool-result",
      "user/nudge",
      "assistant/answer",
      "tool/receipt",
      "user/prompt",
    ]);
    const first = entries.find((e) => e.kind === "message");
    expect(first && "notices" in first ? first.notices : undefined).toEqual([{ type: "conversation-new" }]);
  });

  it("without a stored stream (a history the Orchestrator pushed) the replayed messages read `other`", () => {
    const transcript = createConversationTranscript();
    transcript.restored(replayed, restoredTags([]));
    const entries = transcript.sent(body, replayed);
    const parts = entries.flatMap((e) => (e.kind === "message" && e.role !== "assistant" ? [e.part] : []));
    expect(parts.slice(0, 4)).toEqual(["other", "other", "other", "other"]);
  });
});
