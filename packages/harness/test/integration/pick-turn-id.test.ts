import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../fixtures/fake-openai.js";
import { answer, type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";
import { harnessFor } from "../fixtures/harness.js";

let model: FakeOpenAI;
let orch: FakeOrchestrator;
beforeEach(async () => {
  model = await startFakeOpenAI();
  orch = await startFakeOrchestrator();
});
afterEach(async () => {
  await model.close();
  await orch.close();
});

const call = (name: string, args: unknown = {}) => ({ name, arguments: JSON.stringify(args) });

describe("a pick names its Turn (ADR-0252)", () => {
  it("carries the turnId of the Submission it belongs to, so a re-send finds its own Turn's answer", async () => {
    const h = harnessFor(model, orch);
    orch.answer = () => answer({ allowed: [], turnComplete: true });
    model.script([{ toolCalls: [call("approve", { summary: "ok" })] }]);
    const { settlement } = await h.run("r1/coder", { turnId: "turn-2" });
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks).toEqual([
      { name: "approve", arguments: { summary: "ok" }, toolCallId: expect.any(String), turnId: "turn-2" },
    ]);
  });

  it("sends no turnId for a Submission without one (a Turn whose iid alone decides, §5.4)", async () => {
    const h = harnessFor(model, orch);
    orch.answer = () => answer({ allowed: [], turnComplete: true });
    model.script([{ toolCalls: [call("approve", { summary: "ok" })] }]);
    await h.run("r1/coder");
    expect(orch.picks[0]).not.toHaveProperty("turnId");
  });
});
