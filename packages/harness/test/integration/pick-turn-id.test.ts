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

describe("a pick's idempotency key is unique within its Submission", () => {
  it("two answers that both number their call `call_0` reach the Orchestrator as two picks with distinct keys", async () => {
    const h = harnessFor(model, orch);
    let n = 0;
    // The first pick moves in state (Turn open), the second ends the Turn.
    orch.answer = () =>
      ++n === 1
        ? answer({ allowed: ["finish"], turnComplete: false })
        : answer({ allowed: [], turnComplete: true });
    model.script([
      { toolCalls: [{ id: "call_0", ...call("request_changes", { notes: "r" }) }] },
      { toolCalls: [{ id: "call_0", ...call("finish") }] },
    ]);
    const { settlement } = await h.run("r1/coder", { turnId: "turn-1" });
    expect(settlement.outcome).toBe("completed");
    const keys = orch.picks.map((p) => (p as { toolCallId: string }).toolCallId);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
    // The model's id stays readable; the second is jr2's, unique in the conversation (issue 25 §2).
    for (const key of keys) expect(key).toMatch(/\/call_0(_\d+)*$/);
  });
});
