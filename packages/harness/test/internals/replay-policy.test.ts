// ADR-0310: earlier reasoning is dropped from the replayed history by default, or echoed with
// preserve_thinking for templates that honour it — the same history always gives the same bytes.
import { describe, expect, it } from "vitest";
import { parseModelTable, toPiModel } from "../../src/provider/models.js";
import {
  applyReplayPolicy,
  replayPayloadHook,
  replayPolicyOf,
} from "../../src/provider/replay/replay-policy.js";

const history = (steps: number) => ({
  model: "Qwen/Qwen3.6-35B-A3B",
  stream: true,
  chat_template_kwargs: { enable_thinking: true, preserve_thinking: true },
  messages: [
    { role: "system", content: "You are the worker." },
    { role: "user", content: "Task.\n<jr2-turn>Allowed now: finish.</jr2-turn>" },
    ...Array.from({ length: steps }, (_, i) => [
      {
        role: "assistant",
        content: null,
        reasoning: `I think about step ${i}.`,
        tool_calls: [{ id: `c${i}`, type: "function", function: { name: "ls", arguments: '{"path":"."}' } }],
      },
      { role: "tool", tool_call_id: `c${i}`, content: "README.md" },
    ]).flat(),
  ],
});

describe("reasoning replay policy", () => {
  it("drop: no assistant message carries reasoning, whatever field pi echoed it in; the rest is untouched", () => {
    const sent = applyReplayPolicy(history(2), "drop") as {
      messages: Array<Record<string, unknown>>;
      chat_template_kwargs: unknown;
    };
    const assistants = sent.messages.filter((m) => m.role === "assistant");
    expect(assistants).toHaveLength(2);
    for (const m of assistants) {
      expect(m).not.toHaveProperty("reasoning");
      expect(m).not.toHaveProperty("reasoning_content");
      expect(m.tool_calls as unknown[]).toHaveLength(1);
    }
    expect(sent.chat_template_kwargs).toEqual({ enable_thinking: true, preserve_thinking: true });
    expect(sent.messages.filter((m) => m.role !== "assistant")).toEqual(
      history(2).messages.filter((m) => m.role !== "assistant"),
    );
  });

  it("echo: every answer's reasoning in both fields, and preserve_thinking asked for", () => {
    const input = { ...history(1), chat_template_kwargs: { enable_thinking: true } };
    const sent = applyReplayPolicy(input, "echo") as Record<string, any>;
    const answer = sent.messages.find((m: { role: string }) => m.role === "assistant");
    expect(answer.reasoning).toBe("I think about step 0.");
    expect(answer.reasoning_content).toBe("I think about step 0.");
    expect(sent.chat_template_kwargs).toEqual({ enable_thinking: true, preserve_thinking: true });
    expect(input.chat_template_kwargs).toEqual({ enable_thinking: true });
  });

  it("under either policy each request's messages are a byte prefix of the next request's", () => {
    for (const policy of ["drop", "echo"] as const) {
      const a = JSON.stringify((applyReplayPolicy(history(1), policy) as { messages: unknown[] }).messages);
      const b = JSON.stringify((applyReplayPolicy(history(2), policy) as { messages: unknown[] }).messages);
      expect(b.startsWith(a.slice(0, -1))).toBe(true);
    }
  });

  it("a model entry chooses it with reasoningReplay; without one it is drop", () => {
    const table = parseModelTable(
      JSON.stringify({
        qwen3: { baseUrl: "http://127.0.0.1:8000/v1", id: "q3", contextWindow: 32768, maxTokens: 4096 },
        qwen36: {
          baseUrl: "http://127.0.0.1:8000/v1",
          id: "q36",
          contextWindow: 262144,
          maxTokens: 8192,
          reasoningReplay: "echo",
        },
      }),
    );
    expect(replayPolicyOf(toPiModel("qwen3", table.qwen3!))).toBe("drop");
    const qwen36 = toPiModel("qwen36", table.qwen36!);
    expect(replayPolicyOf(qwen36)).toBe("echo");
    expect(replayPolicyOf({ ...qwen36 })).toBe("echo");
    const sent = replayPayloadHook(history(1), qwen36) as Record<string, any>;
    expect(sent.messages[2].reasoning_content).toBe("I think about step 0.");
    expect(() =>
      parseModelTable(
        JSON.stringify({
          x: { baseUrl: "http://h/v1", id: "x", contextWindow: 1, maxTokens: 1, reasoningReplay: "keep" },
        }),
      ),
    ).toThrow(/reasoningReplay/);
  });
});
