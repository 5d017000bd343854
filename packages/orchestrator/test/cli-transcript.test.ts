/**
 * `jr2 transcript`'s text (ADR-0257): control characters a model wrote (ANSI colours, OSC
 * titles, C1 controls, bidi controls) are printed as visible escapes (issue 25 §7), a block's
 * newline and tab kept; each entry is labelled by part; the
 * prefix is printed once per conversation; a cut field says so. `jr2 show`'s Turn table.
 */
import type { TurnSummary, TurnTranscript } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { turnTable } from "../src/cli/show-command.js";
import { formatTranscript } from "../src/cli/transcript-text.js";

const usage = { promptTokens: 120, cachedTokens: 100, completionTokens: 9, requests: 1 };
const summary: TurnSummary = {
  turnId: "t1",
  agent: "reviewer",
  state: "review",
  startedAt: "2026-01-01T10:00:00.000Z",
  endedAt: "2026-01-01T10:00:05.000Z",
  outcome: "picked",
  pick: { name: "approve", arguments: { summary: "ok" } },
  usage,
};
const transcript: TurnTranscript = {
  ...summary,
  prefix: { system: "You review.", toolsJson: '[{"type":"function","function":{"name":"approve"}}]' },
  entries: [
    {
      at: "2026-01-01T10:00:01.000Z",
      submissionId: "s1",
      entry: { kind: "message", role: "user", part: "prompt", text: "Review it.\tnow", json: "{}" },
    },
    {
      at: "2026-01-01T10:00:02.000Z",
      submissionId: "s1",
      entry: {
        kind: "answer",
        model: "reviewer",
        text: "\u001b[31mred\u001b[0m and \u001b]0;owned\u0007title\u009b2J",
        reasoning: "think\r\nmore",
        toolCalls: [
          { id: "c1", name: "bash", rawArguments: '{"command":"ls"}', disposition: "working" },
          { id: "c2", name: "approve", rawArguments: '{"summary":"ok"}', disposition: "pick" },
        ],
        finishReason: "tool_calls",
        usage: { promptTokens: 120, cachedTokens: 100, completionTokens: 9 },
        replayed: true,
      },
      capped: { text: 70000 },
    },
  ],
};

describe("jr2 transcript's text", () => {
  it("prints the Turn, the prefix once, each entry by part, calls with arguments, usage, and cut fields", () => {
    const text = formatTranscript(transcript);
    expect(text).toContain("Turn t1  review#reviewer  picked");
    expect(text).toContain('  pick approve {"summary":"ok"}');
    expect(text).toContain("system:\n    You review.\ntools: approve\n");
    expect(text).toContain("[10:00:01] user · prompt\n    Review it.\tnow");
    expect(text).toContain("answer · reviewer — prompt 120, cached 100, completion 9, finish tool_calls");
    expect(text).toContain("(cut when stored: text had 70000 bytes, kept to 65536)");
    expect(text).toMatch(
      /\n {2}\[cut here when stored, after byte \d+ of 70000: \d+ bytes \([\d.]+ KiB\) left out\]/,
    );
    expect(text).toContain('  → bash [working]\n    {"command":"ls"}');
    expect(text).toContain("  → approve [pick]");
    expect(text).toContain("  reasoning:\n    think\n    more");
    // No escape survives: the terminal shows the text, not colours or a new window title.
    const controls = [...text].filter((c) => {
      const code = c.codePointAt(0) ?? 0;
      return (code < 0x20 && c !== "\n" && c !== "\t") || (code >= 0x7f && code <= 0x9f);
    });
    expect(controls).toEqual([]);
    expect(text).toContain("\\x1b[31mred\\x1b[0m and \\x1b]0;owned\\x07title\\x9b2J");
    // The next Turn of the conversation: the same prefix is not printed again.
    expect(formatTranscript(transcript, transcript.prefix ?? undefined)).not.toContain("system:");
  });
});

describe("jr2 show's Turn table", () => {
  it("lists turnId, agent, state, outcome, pick and prompt/cached tokens", () => {
    const lines = turnTable(
      [
        summary,
        {
          ...summary,
          turnId: "t2",
          outcome: "faulted",
          pick: null,
          fault: { reason: "infra" },
          usage: { ...usage, cachedTokens: null },
        },
      ],
      "r1",
    );
    expect(lines[0]).toContain("2 recorded");
    expect(lines[1]).toMatch(/turnId\s+agent\s+state\s+outcome\s+pick\s+prompt\s+cached/);
    expect(lines[2]).toMatch(/t1\s+reviewer\s+review\s+picked\s+approve\s+120\s+100$/);
    expect(lines[3]).toMatch(/t2\s+reviewer\s+review\s+faulted\s+fault infra\s+120\s+\?$/);
  });
});

describe("a replayed answer in jr2 transcript", () => {
  it("reads as one line naming what it called, not a second copy of the answer (found by a newcomer)", () => {
    const json = JSON.stringify({
      role: "assistant",
      content: "I will look",
      tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } }],
    });
    const text = formatTranscript({
      ...transcript,
      entries: [
        ...transcript.entries,
        {
          at: "2026-01-01T10:00:03.000Z",
          submissionId: "s1",
          entry: { kind: "message", role: "assistant", part: "answer", text: "I will look", json },
        },
      ],
    });
    expect(text).toContain("[10:00:03] assistant · answer replayed as sent: bash");
    expect(text.match(/I will look/g) ?? []).toHaveLength(0);
    expect(text.match(/"command":"ls"/g) ?? []).toHaveLength(1);
  });
});

describe("tool-call feed lines", () => {
  it("one per non-pick call, its raw arguments folded and cut at 200 characters", async () => {
    const { toolCallLines } = await import("../src/turns/tool-call-lines.js");
    const long = `{"command":"${"x".repeat(300)}"}`;
    const lines = toolCallLines(
      {
        kind: "answer",
        model: "m",
        text: "",
        toolCalls: [
          { id: "1", name: "bash", rawArguments: long, disposition: "working" },
          { id: "2", name: "finish", rawArguments: "{}", disposition: "pick" },
          {
            id: "3",
            name: "read",
            rawArguments: '{\n  "path": "a"\n}',
            disposition: "not-run",
            reason: "after the pick",
          },
        ],
        usage: null,
        replayed: true,
      },
      "coder",
    );
    expect(lines.map((l) => [l.name, l.disposition, [...l.summary].length])).toEqual([
      ["bash", "working", 200],
      ["read", "not-run", 15],
    ]);
    expect(lines[0]?.summary.endsWith("…")).toBe(true);
    expect(lines[1]).toMatchObject({ summary: '{ "path": "a" }', reason: "after the pick", agent: "coder" });
  });
});

describe("a tool call's arguments cut when stored (issue 25 §9)", () => {
  it("say so right after the kept arguments", () => {
    const [, answer] = transcript.entries;
    const text = formatTranscript({
      ...transcript,
      entries: [{ ...answer!, capped: { "toolCalls.0.rawArguments": 3_000_000 } }],
    });
    expect(text).toContain(
      '  → bash [working]\n    {"command":"ls"}\n    [cut here when stored, after byte 16 of 3000000: 2999984 bytes (2.9 MiB) left out]',
    );
  });
});
