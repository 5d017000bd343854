import { describe, expect, it } from "vitest";
import { isTextCall } from "../../src/engine/text-call.js";
import { reportedUsage } from "../../src/provider/provider-usage.js";
import {
  EMPTY_ANSWER_MARK,
  lintModeFromEnv,
  lintPayload,
  normalizeArguments,
} from "../../src/provider/replay/replay-lint.js";

describe("normalizeArguments", () => {
  it.each([
    ['{"a":1}', "object", { a: 1 }],
    ["", "object", {}],
    ['"{\\"a\\":1}"', "not-object", {}],
    ["[1]", "not-object", {}],
    ["null", "not-object", {}],
    ['{"a":', "not-json", {}],
  ])("%j → %s", (raw, kind, value) => {
    expect(normalizeArguments(raw)).toMatchObject({ kind, value });
  });
});

describe("lintPayload", () => {
  const bad = () => ({
    messages: [
      { role: "user", content: "a" },
      { role: "assistant", content: null, tool_calls: [{ function: { name: "x", arguments: '"s"' } }] },
      { role: "tool", content: "r" },
      { role: "user", content: "b" },
      { role: "user", content: "c" },
    ],
  });

  it("strict mode throws naming each problem", () => {
    expect(() => lintPayload(bad(), "strict")).toThrow(/message 1, tool call 0.*two user messages/);
  });

  it("repair mode normalizes and never throws: arguments {} and an empty answer between two users", () => {
    const p = bad();
    expect(lintPayload(p, "repair")).toHaveLength(2);
    expect(p.messages[1]).toMatchObject({ tool_calls: [{ function: { arguments: "{}" } }] });
    expect(p.messages.slice(3).map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(lintPayload(p, "strict")).toEqual([]);
  });

  it("the empty-answer mark becomes exactly {role: assistant, content: ''}", () => {
    const p = {
      messages: [
        { role: "user", content: "a" },
        { role: "assistant", content: EMPTY_ANSWER_MARK, reasoning_content: "t" },
        { role: "user", content: "b" },
      ],
    };
    expect(lintPayload(p, "strict")).toEqual([]);
    expect(p.messages[1]).toEqual({ role: "assistant", content: "" });
  });

  it("is strict under vitest unless told to repair", () => {
    expect(lintModeFromEnv({ VITEST: "true" })).toBe("strict");
    expect(lintModeFromEnv({})).toBe("repair");
    expect(lintModeFromEnv({ JR2_REPLAY_LINT: "strict" })).toBe("strict");
  });
});

describe("text calls and usage", () => {
  it("Hermes and Qwen3-Coder markup are text calls; prose is not", () => {
    expect(isTextCall('<tool_call>\n{"name":"approve"}\n</tool_call>')).toBe(true);
    expect(isTextCall("<tool_call><function=approve></function></tool_call>")).toBe(true);
    expect(isTextCall("I will call approve now.")).toBe(false);
  });

  it("usage fields absent are unreported placeholders, never measured zeros", () => {
    expect(reportedUsage({ usage: { prompt_tokens: 472, completion_tokens: 12 } })).toEqual({
      promptTokens: 472,
      cachedTokens: 0,
      completionTokens: 12,
      unreported: ["cachedTokens"],
    });
    expect(
      reportedUsage({
        usage: { prompt_tokens: 10, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 0 } },
      }).unreported,
    ).toEqual([]);
    expect(reportedUsage({}).unreported).toEqual(["promptTokens", "cachedTokens", "completionTokens"]);
  });
});

describe("lintPayload: well-formed UTF-8 (issue 25 §8)", () => {
  const body = () => ({
    messages: [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "text \ud800 alone",
        tool_calls: [{ function: { name: "appr\udc00ove", arguments: '{"s":"a\\ud800b"}' } }],
      },
    ],
  });

  it("strict: a lone surrogate in content, a name or arguments throws, naming each", () => {
    expect(() => lintPayload(body(), "strict")).toThrow(/message 1: a lone surrogate in its content/);
    expect(() => lintPayload(body(), "strict")).toThrow(/tool call 0's arguments/);
  });

  it("repair: each becomes U+FFFD", () => {
    const b = body();
    const problems = lintPayload(b, "repair");
    expect(problems).toHaveLength(3);
    const m = b.messages[1] as {
      content: string;
      tool_calls: Array<{ function: { name: string; arguments: string } }>;
    };
    expect(m.content).toBe("text \uFFFD alone");
    expect(m.tool_calls[0]!.function.name).toBe("appr\uFFFDove");
    expect(JSON.parse(m.tool_calls[0]!.function.arguments)).toEqual({ s: "a\uFFFDb" });
  });

  it("a well-formed pair (an emoji) is no problem", () => {
    expect(lintPayload({ messages: [{ role: "user", content: "ok 🙂" }] }, "strict")).toEqual([]);
  });
});
