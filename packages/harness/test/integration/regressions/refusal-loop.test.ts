/**
 * Regression (issue 25 §11): a model that kept picking what was never allowed (alternating two
 * Menu picks) ran 256 model requests and ~3.6 M prompt tokens before the step budget stopped it,
 * with no `cause`. Root cause: nothing counted refusals. Fixed: 8 refused picks outside the
 * Allowed picks (or invented tools) in one Submission end it `runaway` with cause
 * `refusal-loop`, the detail naming the picks tried and the Allowed picks.
 * Bytes: hand-written OpenAI tool-call stream; the Orchestrator's answers are its `off-menu` refusal.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeOrchestrator,
  answer as pickAnswer,
  startFakeOrchestrator,
} from "../../fixtures/fake-orchestrator.js";
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

const pick = (name: string, n: number) => ({
  sse: answer({
    toolCalls: [{ name, arguments: name === "approve" ? `{"summary":"${n}"}` : `{"notes":"${n}"}` }],
  }),
});

describe("picks that are never allowed", () => {
  it("8 refused picks outside the Allowed picks end the Submission runaway/refusal-loop", async () => {
    orch.allowed = ["nothing_yet"];
    orch.answer = () =>
      pickAnswer({ allowed: ["nothing_yet"], moved: false, delivered: false, refusal: "off-menu" });
    upstream.script(Array.from({ length: 20 }, (_, i) => pick(i % 2 ? "approve" : "request_changes", i)));
    const { settlement } = await upstreamHarness(upstream, orch).run("r1/coder/refusal-loop");
    expect(settlement).toMatchObject({
      outcome: "failed",
      error: { type: "runaway", cause: "refusal-loop" },
    });
    expect(settlement.error?.message).toContain("tried: request_changes, approve");
    expect(settlement.error?.message).toContain("Allowed picks: nothing_yet");
    expect(orch.picks).toHaveLength(8);
    expect(upstream.bodies).toHaveLength(8);
  });

  it("a model entry's refusalBudget sets the bound: 3 refused picks end it", async () => {
    orch.allowed = ["nothing_yet"];
    orch.answer = () =>
      pickAnswer({ allowed: ["nothing_yet"], moved: false, delivered: false, refusal: "off-menu" });
    upstream.script(Array.from({ length: 20 }, (_, i) => pick(i % 2 ? "approve" : "request_changes", i)));
    const h = upstreamHarness(upstream, orch, { refusalBudget: 3 });
    const { settlement } = await h.run("r1/coder/refusal-budget");
    expect(settlement.error).toMatchObject({ type: "runaway", cause: "refusal-loop" });
    expect(settlement.error?.message).toContain("refusalBudget 3 of model entry `sim`");
    expect(orch.picks).toHaveLength(3);
  });

  it("busy refusals are not counted", async () => {
    let n = 0;
    orch.answer = () =>
      ++n <= 9
        ? pickAnswer({ allowed: ["approve"], moved: false, delivered: false, refusal: "busy" })
        : pickAnswer({ allowed: [], turnComplete: true });
    upstream.script(Array.from({ length: 10 }, (_, i) => pick("approve", i)));
    const { settlement } = await upstreamHarness(upstream, orch).run("r1/coder/busy");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks).toHaveLength(10);
  });
});
