import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, type ScriptedReply, startFakeOpenAI } from "../fixtures/fake-openai.js";
import { answer, type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";
import { harnessFor, parsed } from "../fixtures/harness.js";

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

/** The fixture's model entry with a three-attempt, millisecond retry policy. */
const fastRetryModels = (m: FakeOpenAI) => ({
  sim: {
    baseUrl: m.baseUrl,
    id: "sim",
    contextWindow: 32768,
    maxTokens: 1024,
    temperature: 0,
    retry: { attempts: 3, initialBackoffMs: 1, maxBackoffMs: 2 },
  },
});
const call = (name: string, args: unknown = {}) => ({ name, arguments: JSON.stringify(args) });
const PI_TEXTS = [/not found/i, /Validation failed/, /No result provided/, /Tool execution was blocked/];
const noPiTexts = () => {
  for (const body of model.bodies) for (const re of PI_TEXTS) expect(body).not.toMatch(re);
};
/** Each request of a Submission is a byte prefix of the next (minus the closing `]}`). */
const prefixes = (bodies: string[]) => {
  for (let i = 1; i < bodies.length; i++) {
    const prev = JSON.parse(bodies[i - 1]!);
    const next = JSON.parse(bodies[i]!);
    expect(JSON.stringify(next.tools)).toBe(JSON.stringify(prev.tools));
    const a = JSON.stringify(prev.messages);
    expect(JSON.stringify(next.messages).startsWith(a.slice(0, -1))).toBe(true);
  }
};

describe("one Submission", () => {
  it("a pick with turnComplete ends the loop: completed, one request, the Turn part follows the prompt", async () => {
    const h = harnessFor(model, orch);
    orch.answer = () => answer({ allowed: [], turnComplete: true });
    model.script([{ toolCalls: [call("approve", { summary: "ok" })] }]);
    const { events, settlement } = await h.run("r1/coder/aa");
    expect(settlement.outcome).toBe("completed");
    expect(model.bodies).toHaveLength(1);
    expect(orch.picks).toEqual([
      { name: "approve", arguments: { summary: "ok" }, toolCallId: expect.any(String) },
    ]);
    const req = parsed(model)[0]!;
    expect(req.messages[0]).toMatchObject({ role: "system" });
    expect(String(req.messages[0]!.content)).toContain("<jr2-briefing>");
    expect(req.messages[1]!.content).toEqual([
      {
        type: "text",
        text: "Review the change.\n\n<jr2-turn>\nAllowed now: approve, request_changes.\n</jr2-turn>",
      },
    ]);
    expect(req.tools?.map((t) => (t as { function: { name: string } }).function.name)).toEqual([
      "approve",
      "request_changes",
      "finish",
    ]);
    expect(events.filter((e) => e.type === "usage")).toEqual([
      {
        type: "usage",
        submissionId: settlement.submissionId,
        promptTokens: 100,
        cachedTokens: 40,
        completionTokens: 7,
        finishReason: "tool_calls",
      },
    ]);
    expect(events.find((e) => e.type === "pick")).toMatchObject({
      name: "approve",
      answer: { turnComplete: true },
    });
  });

  it("C2: a tool that was never offered gets a jr2 receipt naming the Allowed picks, no delivery, Turn open", async () => {
    const h = harnessFor(model, orch);
    orch.answer = () => answer({ allowed: [], turnComplete: true });
    model.script([{ toolCalls: [call("run_tests")] }, { toolCalls: [call("approve", { summary: "ok" })] }]);
    const { settlement } = await h.run("r1/coder/c2");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks.map((p) => p.name)).toEqual(["approve"]);
    const second = parsed(model)[1]!;
    const tool = second.messages.find((m) => m.role === "tool")!;
    expect(tool.content).toBe(
      'There is no tool "run_tests" in this workflow; nothing was delivered. Your turn is not over. Pick one of the allowed tools.\nAllowed now: approve, request_changes.',
    );
    noPiTexts();
    prefixes(model.bodies);
  });

  it("a length-truncated tool call makes zero POSTs and gets a cut-off receipt", async () => {
    const h = harnessFor(model, orch);
    model.script([
      { toolCalls: [{ name: "approve", arguments: '{"summary": "hal' }], finish: "length" },
      { text: "stopping" },
    ]);
    const { settlement } = await h.run("r1/coder/len");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks).toHaveLength(0);
    const tool = parsed(model)[1]!.messages.find((m) => m.role === "tool")!;
    expect(String(tool.content)).toMatch(/^Your answer was cut off at the output limit/);
    expect(model.refused).toEqual([]);
    noPiTexts();
  });

  it("C6: a stream that ends without a finish reason is retried with the same bytes; nothing partial is delivered", async () => {
    const h = harnessFor(model, orch, { models: fastRetryModels(model) });
    orch.answer = () => answer({ allowed: [], turnComplete: true });
    model.script([
      { toolCalls: [{ name: "approve", arguments: '{"summary": "o' }], finish: null },
      { toolCalls: [call("approve", { summary: "ok" })] },
    ]);
    const { events, settlement } = await h.run("r1/coder/c6");
    expect(settlement.outcome).toBe("completed");
    expect(model.bodies).toHaveLength(2);
    expect(model.bodies[1]).toBe(model.bodies[0]);
    expect(events.filter((e) => e.type === "retry")).toMatchObject([{ attempt: 1, cause: "stream-cut" }]);
    expect(orch.picks).toEqual([
      { name: "approve", arguments: { summary: "ok" }, toolCallId: expect.any(String) },
    ]);
  });

  it("C6: a stream that keeps ending without a finish reason settles failed stream-cut after the attempts bound", async () => {
    const h = harnessFor(model, orch, { models: fastRetryModels(model) });
    const cut: ScriptedReply = {
      toolCalls: [{ name: "approve", arguments: '{"summary": "o' }],
      finish: null,
    };
    model.script([cut, cut, cut]);
    const { settlement } = await h.run("r1/coder/c6b");
    expect(settlement).toMatchObject({
      outcome: "failed",
      error: { type: "stream-incomplete", cause: "stream-cut" },
    });
    expect(settlement.error?.message).toContain("model entry `sim`");
    expect(model.bodies).toHaveLength(3);
    expect(orch.picks).toHaveLength(0);
    model.script([{ text: "I have finished." }]);
    const again = await h.run("r1/coder/c6b", { kind: "nudge", kept: true, prompt: undefined });
    expect(again.settlement.outcome).toBe("completed");
    expect(model.refused).toEqual([]);
    prefixes(model.bodies.slice(2));
    // The failed answer keeps its place as an empty assistant message: never two users in a row.
    const nudge = parsed(model)[3]!.messages;
    expect(nudge.slice(-3).map((m) => [m.role, m.role === "assistant" ? m.content : "…"])).toEqual([
      ["user", "…"],
      ["assistant", ""],
      ["user", "…"],
    ]);
  });

  it("arguments that are not JSON get a receipt and no POST; the history replays as JSON", async () => {
    const h = harnessFor(model, orch);
    model.script([{ toolCalls: [{ name: "approve", arguments: "{summary: oops" }] }, { text: "ok" }]);
    const { settlement } = await h.run("r1/coder/nojson");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks).toHaveLength(0);
    const tool = parsed(model)[1]!.messages.find((m) => m.role === "tool")!;
    expect(String(tool.content)).toMatch(/are not valid JSON/);
    expect(model.refused).toEqual([]);
  });

  it("404 from the surface settles aborted without a model request", async () => {
    const h = harnessFor(model, orch);
    orch.live = false;
    const { settlement } = await h.run("r1/coder/gone");
    expect(settlement.outcome).toBe("aborted");
    expect(model.bodies).toHaveLength(0);
  });

  it("4 identical consecutive tool calls settle failed runaway", async () => {
    const h = harnessFor(model, orch);
    orch.answer = () => answer({ allowed: ["approve", "request_changes"], moved: false });
    const same = { toolCalls: [call("approve", { summary: "x" })] };
    model.script([same, same, same, same, same]);
    const { settlement } = await h.run("r1/coder/loop");
    expect(settlement).toMatchObject({ outcome: "failed", error: { type: "runaway" } });
    expect(orch.picks).toHaveLength(3);
    expect(model.bodies).toHaveLength(4);
  });
});
