/**
 * Regression (issue 10 §3, case C1): an answer that wrote its tool call as Hermes `<tool_call>`
 * markup in `content` (a server without a tool-call parser) settled like any stop without a
 * pick: a generic nudge and, after the budget, a silent `no-signal`. Root cause: nothing looked
 * at the text. Fixed: the Submission settles completed with `textCall: true` (the markup is
 * never parsed, run or delivered) and a warn line says the server's tool-call parser may be off;
 * the Orchestrator nudges with the `text-call` notice. The markup is hand-written (Hermes form).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { auth } from "../../fixtures/harness.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../../fixtures/scripted-upstream.js";
import { upstreamHarness } from "../../fixtures/upstream-harness.js";

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

const MARKUP =
  'I approve the change.\n<tool_call>\n{"name": "approve", "arguments": {"summary": "SECRET looks good"}}\n</tool_call>';

describe("C1: a tool call written as text", () => {
  it("settles completed with textCall, delivers nothing, and warns that the tool-call parser may be off", async () => {
    const h = upstreamHarness(upstream, orch);
    upstream.script([{ sse: answer({ content: MARKUP, finish: "stop" }) }]);
    const { settlement } = await h.run("r1/coder/c1", { turnId: "t-c1" });
    expect(settlement).toMatchObject({ outcome: "completed", textCall: true });
    expect(orch.picks).toHaveLength(0);
    expect(upstream.bodies).toHaveLength(1);
    const warn = h.warns().find((l) => /tool-call parser may be off/.test(l.msg));
    expect(warn).toMatchObject({ iid: "r1/coder/c1", turnId: "t-c1", model: "sim" });
    expect(JSON.stringify(h.warns())).not.toContain("SECRET");
    const history = await h.app.inject({
      method: "GET",
      url: "/conversations/r1%2Fcoder%2Fc1/history",
      headers: auth,
    });
    expect(history.json().settlements).toMatchObject([{ outcome: "completed", textCall: true }]);
  });

  it("plain text without markup (C5) settles completed without textCall", async () => {
    const h = upstreamHarness(upstream, orch);
    upstream.script([{ sse: answer({ content: "I have finished the review.", finish: "stop" }) }]);
    const { settlement } = await h.run("r1/coder/c5");
    expect(settlement.outcome).toBe("completed");
    expect(settlement.textCall).toBeUndefined();
  });
});
