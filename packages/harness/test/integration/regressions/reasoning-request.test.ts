/**
 * Regression (issue 10 §4): Qwen3 thought on every request even with `thinkingLevel: "off"`
 * (its `<think>` text in `content`, the output budget spent), because no model entry told pi-ai
 * how to switch thinking off. Fixed: a model entry with `compat.thinkingFormat:
 * "qwen-chat-template"` (pi-ai's setting; `reasoning` then defaults to true) sends
 * `chat_template_kwargs: { enable_thinking: false }` when the Turn's thinking is off. Reasoning
 * streamed as `reasoning` (vLLM ≥ 0.17) or `reasoning_content` (older vLLM, llama-server)
 * arrives as reasoning, not content; a reasoning-only answer is replayed as an empty assistant
 * message. The reasoning deltas are hand-written from vLLM's documentation.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { auth } from "../../fixtures/harness.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../../fixtures/scripted-upstream.js";
import { isByteExtension, messagesOf, upstreamHarness } from "../../fixtures/upstream-harness.js";

let upstream: ScriptedUpstream;
let orch: FakeOrchestrator;
beforeEach(async () => {
  upstream = await startScriptedUpstream();
  orch = await startFakeOrchestrator();
});
afterEach(async () => {
  await upstream.close();
  await orch.close();
});

const QWEN = { compat: { thinkingFormat: "qwen-chat-template" } };
const body = (i: number) => JSON.parse(upstream.bodies[i]!) as Record<string, unknown>;

describe("reasoning models, request side", () => {
  it('thinkingLevel "off" sends chat_template_kwargs.enable_thinking false', async () => {
    const h = upstreamHarness(upstream, orch, QWEN);
    await h.run("r1/coder/off");
    expect(body(0).chat_template_kwargs).toMatchObject({ enable_thinking: false });
    expect(body(0).reasoning_effort).toBeUndefined();
  });

  it("a thinking level sends enable_thinking true", async () => {
    const h = upstreamHarness(upstream, orch, QWEN);
    await h.run("r1/coder/on", { thinkingLevel: "medium" });
    expect(body(0).chat_template_kwargs).toMatchObject({ enable_thinking: true });
  });

  it("an entry without a thinking format sends no chat_template_kwargs", async () => {
    const h = upstreamHarness(upstream, orch);
    await h.run("r1/coder/plain");
    expect(body(0).chat_template_kwargs).toBeUndefined();
  });

  for (const field of ["reasoning", "reasoning_content"] as const) {
    it(`reasoning streamed as \`${field}\` arrives as reasoning, not content`, async () => {
      const h = upstreamHarness(upstream, orch, QWEN);
      upstream.script([
        {
          sse: answer({ reasoning: "THINKING about it", reasoningField: field, content: "I have finished." }),
        },
      ]);
      const iid = `r1/coder/${field}`;
      const { events } = await h.run(iid);
      const said = events.filter((e) => e.type === "message-appended" && e.role === "assistant");
      expect(said).toMatchObject([{ text: "I have finished." }]);
      const history = await h.app.inject({
        method: "GET",
        url: `/conversations/${encodeURIComponent(iid)}/history`,
        headers: auth,
      });
      const blocks = (
        history.json().messages as Array<{ role: string; content: Array<Record<string, unknown>> }>
      )
        .filter((m) => m.role === "assistant")
        .flatMap((m) => m.content);
      expect(blocks).toEqual([
        expect.objectContaining({ type: "thinking", thinking: "THINKING about it" }),
        expect.objectContaining({ type: "text", text: "I have finished." }),
      ]);
    });
  }

  it("a reasoning-only answer is replayed as {role: assistant, content: ''} before the nudge", async () => {
    const h = upstreamHarness(upstream, orch, QWEN);
    upstream.script([{ sse: answer({ reasoning: "only thinking", finish: "stop" }) }]);
    const first = await h.run("r1/coder/ro");
    expect(first.settlement.outcome).toBe("completed");
    upstream.script([{ sse: answer({ content: "done" }) }]);
    await h.run("r1/coder/ro", { kind: "nudge", kept: true, prompt: undefined });
    const [a, b] = upstream.bodies as [string, string];
    expect(isByteExtension(a, b)).toBe(true);
    const added = messagesOf(b).slice(messagesOf(a).length);
    expect(added[0]).toEqual({ role: "assistant", content: "" });
    expect(added[1]).toMatchObject({ role: "user" });
  });
});
