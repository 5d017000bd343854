/**
 * The transcript's pure parts (ADR-0159): a request body diffed against what the conversation
 * streamed (transcript-diff.ts), the conversation's bookkeeping across requests
 * (transcript-log.ts), and an answer's entry with its calls' fates (transcript-answer.ts).
 */
import type { AssistantMessage } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import {
  answerEntry,
  NEVER_REACHED,
  NEVER_SEEN,
  notRunFate,
  usageOf,
} from "../../src/transcript/transcript-answer.js";
import { type DiffLookups, diffRequest, type UserTag } from "../../src/transcript/transcript-diff.js";
import { bodyToolCallId, createConversationTranscript } from "../../src/transcript/transcript-log.js";

const TOOLS = [{ type: "function", function: { name: "approve", parameters: {} } }];
const system = { role: "system", content: "the standing part" };
const prompt = { role: "user", content: [{ type: "text", text: "Review.\n\n<jr2-turn>…</jr2-turn>" }] };
const called = {
  role: "assistant",
  content: null,
  tool_calls: [{ id: "call_0", type: "function", function: { name: "approve", arguments: "{}" } }],
};
const receipt = { role: "tool", content: "Delivered: approve.", tool_call_id: "call_0" };
const restated = { role: "user", content: [{ type: "text", text: "Allowed now: finish." }] };
const body = (...messages: unknown[]) => ({ model: "m", messages, tools: TOOLS, stream: true });

const noTags: DiffLookups = { user: () => undefined, tool: () => undefined };
const tags = (users: UserTag[], tools: Record<string, "receipt" | "tool-result">): DiffLookups => ({
  user: (n) => users[n],
  tool: (id) => (tools[id] ? { part: tools[id]!, name: "approve" } : undefined),
});

describe("diffRequest", () => {
  it("streams the prefix and every message of a first body, each as its exact JSON", () => {
    const out = diffRequest(
      body(system, prompt),
      { sent: 0, prefix: undefined },
      tags([{ part: "prompt" }], {}),
    );
    expect(out.entries).toEqual([
      { kind: "prefix", system: "the standing part", toolsJson: JSON.stringify(TOOLS) },
      {
        kind: "message",
        role: "user",
        part: "prompt",
        text: "Review.\n\n<jr2-turn>…</jr2-turn>",
        json: JSON.stringify(prompt),
      },
    ]);
    expect(out.state).toEqual({
      sent: 2,
      prefix: { system: "the standing part", toolsJson: JSON.stringify(TOOLS) },
    });
  });

  it("streams only the messages a body adds, with the part the Harness knows, and no prefix again", () => {
    const lookups = tags([{ part: "prompt" }, { part: "restatement" }], { call_0: "receipt" });
    const first = diffRequest(body(system, prompt), { sent: 0, prefix: undefined }, lookups);
    const next = diffRequest(body(system, prompt, called, receipt, restated), first.state, lookups);
    expect(next.entries.map((e) => (e.kind === "message" ? `${e.role}:${e.part}` : e.kind))).toEqual([
      "assistant:answer",
      "tool:receipt",
      "user:restatement",
    ]);
    expect(next.entries[1]).toMatchObject({
      toolCallId: "call_0",
      toolName: "approve",
      text: "Delivered: approve.",
    });
    expect(next.entries.map((e) => (e.kind === "message" ? e.json : ""))).toEqual(
      [called, receipt, restated].map((m) => JSON.stringify(m)),
    );
    // The same body again (a retry sends the same bytes) adds nothing.
    expect(diffRequest(body(system, prompt, called, receipt, restated), next.state, lookups).entries).toEqual(
      [],
    );
  });

  it("streams the prefix again only when it changed", () => {
    const first = diffRequest(body(system, prompt), { sent: 0, prefix: undefined }, noTags);
    const changed = { ...body(system, prompt, called), tools: [...TOOLS, ...TOOLS] };
    const next = diffRequest(changed, first.state, noTags);
    expect(next.entries[0]).toEqual({
      kind: "prefix",
      system: "the standing part",
      toolsJson: JSON.stringify(changed.tools),
    });
  });

  it("calls what the Harness did not tag `other`; pi-ai's image attachment takes no user tag", () => {
    const image = {
      role: "user",
      content: [
        { type: "text", text: "Attached" },
        { type: "image_url", image_url: { url: "data:" } },
      ],
    };
    const out = diffRequest(
      body(system, prompt, called, receipt, image, restated),
      { sent: 0, prefix: undefined },
      tags([{ part: "prompt" }, { part: "continue" }], {}),
    );
    expect(out.entries.slice(1).map((e) => (e.kind === "message" ? `${e.role}:${e.part}` : e.kind))).toEqual([
      "user:prompt",
      "assistant:answer",
      "tool:other",
      "user:other",
      "user:continue",
    ]);
  });

  it("carries the Submission's notices on its prompt; ignores a body that is not Chat Completions", () => {
    const notices = [{ type: "conversation-new" as const }];
    const out = diffRequest(
      body(system, prompt),
      { sent: 0, prefix: undefined },
      tags([{ part: "nudge", notices }], {}),
    );
    expect(out.entries[1]).toMatchObject({ part: "nudge", notices });
    expect(diffRequest("not a body", { sent: 0, prefix: undefined }, noTags).entries).toEqual([]);
    expect(diffRequest({ messages: "x" }, { sent: 0, prefix: undefined }, noTags).entries).toEqual([]);
  });
});

describe("a conversation's transcript (transcript-log.ts)", () => {
  it("finds a tool call under the id pi-ai gives it in the body", () => {
    expect(bodyToolCallId("call_abc")).toBe("call_abc");
    expect(bodyToolCallId("call+1/x|item-very-long+/=")).toBe("call_1_x");
    const t = createConversationTranscript();
    t.sent(body(system, prompt), []);
    t.called([{ id: "call+1/x|item", name: "approve", rawArguments: "{}", disposition: "pick" }]);
    const shortened = { role: "tool", content: "Delivered.", tool_call_id: "call_1_x" };
    expect(t.sent(body(system, prompt, called, shortened), [])[1]).toMatchObject({ part: "receipt" });
  });

  it("tags by message object and by tool-call id, each tool tag used once", () => {
    const t = createConversationTranscript();
    const piPrompt = { role: "user", content: [] };
    const piRestated = { role: "user", content: [] };
    t.tagUser(piPrompt, { part: "prompt" });
    t.tagUser(piRestated, { part: "restatement" });
    expect(t.sent(body(system, prompt), [piPrompt]).map((e) => e.kind)).toEqual(["prefix", "message"]);
    t.called([{ id: "call_0", name: "approve", rawArguments: "{}", disposition: "pick" }]);
    const piAnswer = { role: "assistant" };
    const piReceipt = { role: "toolResult" };
    const next = t.sent(body(system, prompt, called, receipt, restated), [
      piPrompt,
      piAnswer,
      piReceipt,
      piRestated,
    ]);
    expect(next.map((e) => (e.kind === "message" ? e.part : e.kind))).toEqual([
      "answer",
      "receipt",
      "restatement",
    ]);
    // A later answer reusing `call_0` (a Working tool this time) is told apart.
    t.called([{ id: "call_0", name: "ls", rawArguments: "{}", disposition: "working" }]);
    const result = { role: "tool", content: "a.txt", tool_call_id: "call_0" };
    const third = t.sent(body(system, prompt, called, receipt, restated, called, result), []);
    expect(third.map((e) => (e.kind === "message" ? e.part : e.kind))).toEqual(["answer", "tool-result"]);
  });
});

const assistant = (
  content: AssistantMessage["content"],
  stopReason: AssistantMessage["stopReason"] = "toolUse",
) => ({ role: "assistant", content, stopReason }) as AssistantMessage;
const probe = { usage: { prompt_tokens: 100, completion_tokens: 7 }, finishReason: "tool_calls" };

describe("answerEntry", () => {
  it("keeps the text, the reasoning, the model's argument bytes and the replayed form where it differs", () => {
    const message = assistant([
      { type: "thinking", thinking: "small diff" },
      { type: "text", text: "Approving." },
      { type: "toolCall", id: "c1", name: "approve", arguments: { summary: "ok" } },
      { type: "toolCall", id: "c2", name: "ls", arguments: {} },
    ]);
    const raw = new Map([
      [2, '{ "summary": "ok" }'],
      [3, "{}"],
    ]);
    const entry = answerEntry("sim", { attempt: 1, message, raw, probe, replayed: true }, (id) =>
      id === "c1" ? { disposition: "pick" } : undefined,
    );
    expect(entry).toEqual({
      kind: "answer",
      model: "sim",
      text: "Approving.",
      reasoning: "small diff",
      toolCalls: [
        {
          id: "c1",
          name: "approve",
          rawArguments: '{ "summary": "ok" }',
          replayedArguments: '{"summary":"ok"}',
          disposition: "pick",
        },
        { id: "c2", name: "ls", rawArguments: "{}", ...NEVER_REACHED },
      ],
      finishReason: "tool_calls",
      // No cached count reported: null, never 0 (ADR-0400).
      usage: { promptTokens: 100, cachedTokens: null, completionTokens: 7 },
      attempt: 1,
      replayed: true,
    });
  });

  it("marks an attempt the conversation never saw: not replayed, its calls never run, its error", () => {
    const message = assistant([{ type: "toolCall", id: "c1", name: "approve", arguments: {} }], "error");
    const entry = answerEntry(
      "sim",
      {
        attempt: 2,
        message,
        raw: new Map([[0, '{"summ']]),
        probe: {},
        replayed: false,
        error: "stream-cut: cut",
      },
      () => ({ disposition: "pick" }),
    );
    expect(entry).toMatchObject({
      replayed: false,
      attempt: 2,
      error: "stream-cut: cut",
      usage: null,
      text: "",
    });
    expect(entry.toolCalls).toEqual([{ id: "c1", name: "approve", rawArguments: '{"summ', ...NEVER_SEEN }]);
    expect(entry).not.toHaveProperty("reasoning");
  });

  it("reads llama-server's timings when there is no usage object", () => {
    expect(usageOf({ timings: { prompt_n: 10, cache_n: 90, predicted_n: 5 } })).toEqual({
      promptTokens: 100,
      cachedTokens: 90,
      completionTokens: 5,
    });
    expect(usageOf({})).toBeNull();
  });

  it("says in words why a call was not run; a name on no tools block is invented", () => {
    expect(notRunFate({ reason: "unknown-tool" }).disposition).toBe("invented");
    for (const why of [
      { reason: "truncated" },
      { reason: "not-json", sent: "x" },
      { reason: "not-object", sent: "[]", kind: "an array" },
      { reason: "turn-over" },
      { reason: "stopped" },
      { reason: "refused-arguments", detail: "path: Required" },
      { reason: "outside-cwd", path: "/etc/passwd" },
    ] as const) {
      const fate = notRunFate(why);
      expect(fate.disposition).toBe("not-run");
      expect(fate.reason).toMatch(/\w+ \w+/);
    }
    expect(notRunFate({ reason: "not-object", sent: "[]", kind: "an array" }).reason).toContain("an array");
  });
});
