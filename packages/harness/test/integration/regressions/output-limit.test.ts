/**
 * Regression (issue 10 §3): answers cut at `maxTokens` were misreported as "runaway: 4 identical
 * consecutive tool calls" (a cut call, repaired by pi, re-sent until the identical-call rule
 * fired) or, for a text answer, as a silent stop. Root cause: no rule about the output limit.
 * Fixed: an answer cut with no call is asked once more (a `<jr2-turn>` block); two consecutive
 * answers of one Submission cut at the limit settle `failed { type: "runaway", cause:
 * "output-limit" }`, the message naming maxTokens and the model entry. The dropped empty answer
 * is replayed as `{"role":"assistant","content":""}` (never two user messages in a row).
 * Replays llama-server's recorded `finish_reason: "length"` stream (r1_stream).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
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

describe("answers cut at maxTokens", () => {
  it("two in a row (recorded r1_stream twice) → cause output-limit naming maxTokens and the model entry", async () => {
    const h = upstreamHarness(upstream, orch);
    upstream.script([{ recorded: "r1_stream" }, { recorded: "r1_stream" }]);
    const { settlement } = await h.run("r1/coder/cut2");
    expect(settlement).toMatchObject({
      outcome: "failed",
      error: { type: "runaway", cause: "output-limit" },
    });
    expect(settlement.error?.message).toContain("maxTokens 1024");
    expect(settlement.error?.message).toContain("model entry `sim`");
    expect(upstream.bodies).toHaveLength(2);
    const [first, second] = upstream.bodies as [string, string];
    expect(isByteExtension(first, second)).toBe(true);
    // The empty cut answer is replayed as an empty assistant message, then the ask-again block.
    const added = messagesOf(second).slice(messagesOf(first).length);
    expect(added[0]).toEqual({ role: "assistant", content: "" });
    expect(added[1]).toMatchObject({ role: "user" });
    expect(JSON.stringify(added[1])).toContain("cut off at the output limit");
  });

  it("one cut, then a pick: the Submission goes on", async () => {
    const h = upstreamHarness(upstream, orch);
    upstream.script([
      { recorded: "r1_stream" },
      { sse: answer({ toolCalls: [{ name: "approve", arguments: '{"summary":"ok"}' }] }) },
    ]);
    const { settlement } = await h.run("r1/coder/cut1");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks.map((p) => p.name)).toEqual(["approve"]);
  });

  it("a tool call cut twice → output-limit, not 'identical consecutive tool calls'; nothing is POSTed", async () => {
    const h = upstreamHarness(upstream, orch);
    const cut = {
      sse: answer({ toolCalls: [{ name: "approve", arguments: '{"summary": "ha' }], finish: "length" }),
    };
    upstream.script([cut, cut, cut, cut]);
    const { settlement } = await h.run("r1/coder/cutcall");
    expect(settlement).toMatchObject({
      outcome: "failed",
      error: { type: "runaway", cause: "output-limit" },
    });
    expect(orch.picks).toHaveLength(0);
    expect(upstream.bodies).toHaveLength(2);
  });
});
