/**
 * The Turn transcript on the Harness stream (issue 11 item 3, ADR-0159), over real Turns: the
 * Harness against model-sim (which records every request body byte-exact) and against the
 * scripted vLLM-style upstream (reasoning, a stream cut and its retry). Each `message` entry's
 * `json` is checked against the body the server received — bytes this test did not write.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningModelSim, startModelSim } from "@jr2/model-sim";
import type { StreamEvent, TranscriptEntry } from "@jr2/wire";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeOrchestrator,
  answer as pickAnswer,
  startFakeOrchestrator,
} from "../fixtures/fake-orchestrator.js";
import { harnessFor } from "../fixtures/harness.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../fixtures/scripted-upstream.js";
import { messagesOf, upstreamHarness } from "../fixtures/upstream-harness.js";

type Entry<K extends TranscriptEntry["kind"]> = Extract<TranscriptEntry, { kind: K }>;
const entries = (events: StreamEvent[]) => events.flatMap((e) => (e.type === "transcript" ? [e.entry] : []));
const ofKind = <K extends TranscriptEntry["kind"]>(events: StreamEvent[], kind: K) =>
  entries(events).filter((e): e is Entry<K> => e.kind === kind);

let orch: FakeOrchestrator;
beforeEach(async () => {
  orch = await startFakeOrchestrator();
});
afterEach(async () => {
  await orch.close();
});

describe("a Turn against model-sim", () => {
  let sim: RunningModelSim;
  beforeEach(async () => {
    sim = await startModelSim();
  });
  afterEach(async () => {
    await sim.close();
  });

  it("streams the prefix once, each message's exact JSON as model-sim received it, and each answer", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "jr2-transcript-"));
    writeFileSync(join(cwd, "README.md"), "# the project\n");
    // worker:1 — one Working-tool call, then picks (obedient). The first pick keeps the Turn open.
    let picks = 0;
    orch.allowed = ["approve", "finish"];
    orch.answer = () => {
      picks++;
      if (picks === 1) {
        orch.allowed = ["finish"];
        return pickAnswer({ allowed: ["finish"], turnComplete: false });
      }
      return pickAnswer({ allowed: [], turnComplete: true });
    };
    const h = harnessFor({ baseUrl: sim.baseUrl }, orch, {
      models: { sim: { baseUrl: sim.baseUrl, id: "worker:1", contextWindow: 32768, maxTokens: 1024 } },
    });
    const notices = [{ type: "conversation-new" as const }];
    const { events, settlement } = await h.run("r1/coder/transcript", {
      turnId: "t-1",
      definition: { model: "sim", instructions: "You review code.", workspace: "read" },
      cwd,
      notices,
    });
    expect(settlement.outcome).toBe("completed");
    const bodies = sim.requests().map((r) => r.raw);
    expect(bodies.length).toBe(3);
    const mine = events.filter((e) => e.type === "transcript");
    for (const e of mine) expect(e).toMatchObject({ submissionId: settlement.submissionId });

    // The prefix, once: the system prompt and the tools block exactly as the first request sent them.
    const first = JSON.parse(bodies[0]!) as { messages: Array<{ content: string }>; tools: unknown[] };
    expect(ofKind(events, "prefix")).toEqual([
      { kind: "prefix", system: first.messages[0]!.content, toolsJson: JSON.stringify(first.tools) },
    ]);

    // Every message of the last body but the system prompt, once, in order, its JSON as received.
    const last = messagesOf(bodies.at(-1)!);
    const messages = ofKind(events, "message");
    expect(messages.map((m) => m.json)).toEqual(last.slice(1).map((m) => JSON.stringify(m)));
    expect(bodies.at(-1)).toContain(messages.map((m) => m.json).join(","));
    expect(messages.map((m) => `${m.role}:${m.part}`)).toEqual([
      "user:prompt",
      "assistant:answer",
      "tool:tool-result",
      "assistant:answer",
      "tool:receipt",
    ]);
    const [prompt, , result, , receipt] = messages;
    expect(prompt!.text).toContain("<jr2-turn>");
    expect(prompt!.text).toContain("Allowed now: approve, finish.");
    expect(prompt!.notices).toEqual(notices);
    expect(result).toMatchObject({ toolName: expect.any(String), toolCallId: expect.any(String) });
    expect(receipt).toMatchObject({ toolName: "approve" });

    // Each answer as received: the model's own argument bytes, what the Harness did with each call.
    const answers = ofKind(events, "answer");
    expect(answers).toHaveLength(3);
    for (const a of answers) expect(a).toMatchObject({ model: "sim", attempt: 1, replayed: true });
    expect(answers.map((a) => a.toolCalls.map((c) => c.disposition))).toEqual([
      ["working"],
      ["pick"],
      ["pick"],
    ]);
    expect(answers.map((a) => a.toolCalls[0]!.name).slice(1)).toEqual(["approve", "finish"]);
    // The replayed call in the next body carries the arguments the model sent.
    const replayedCall = (last[2] as { tool_calls: Array<{ id: string; function: { arguments: string } }> })
      .tool_calls[0]!;
    expect(answers[0]!.toolCalls[0]).toMatchObject({ id: replayedCall.id });
    expect(JSON.parse(answers[0]!.toolCalls[0]!.rawArguments)).toEqual(
      JSON.parse(replayedCall.function.arguments),
    );
    const usage = sim.requests().map((r) => r.usage!);
    expect(answers.map((a) => a.usage)).toEqual(
      usage.map((u) => ({
        promptTokens: u.prompt_tokens,
        cachedTokens: u.prompt_tokens_details.cached_tokens,
        completionTokens: u.completion_tokens,
      })),
    );
    await h.app.close();
  });

  it("continues across Submissions: only what a later request adds, the last pick's receipt first", async () => {
    orch.answer = () => pickAnswer({ allowed: [], turnComplete: true });
    const h = harnessFor({ baseUrl: sim.baseUrl }, orch, {
      models: { sim: { baseUrl: sim.baseUrl, id: "obedient", contextWindow: 32768, maxTokens: 1024 } },
    });
    const iid = "r1/coder/continued";
    const one = await h.run(iid, { turnId: "t-1" });
    const two = await h.run(iid, { turnId: "t-2", prompt: "Review the next change." });
    expect([one.settlement.outcome, two.settlement.outcome]).toEqual(["completed", "completed"]);
    const bodies = sim.requests().map((r) => r.raw);
    expect(bodies).toHaveLength(2);
    const later = two.events.filter((e) => e.type === "transcript");
    for (const e of later) expect(e.submissionId).toBe(two.settlement.submissionId);
    const messages = ofKind(later, "message");
    // No prefix again; Turn 1's last answer as replayed and its receipt reach the model (and the
    // transcript) with Turn 2's prompt: a message is streamed when a request first carries it.
    expect(ofKind(later, "prefix")).toEqual([]);
    expect(messages.map((m) => `${m.role}:${m.part}`)).toEqual([
      "assistant:answer",
      "tool:receipt",
      "user:prompt",
    ]);
    expect(messages.map((m) => m.json)).toEqual(
      messagesOf(bodies[1]!)
        .slice(2)
        .map((m) => JSON.stringify(m)),
    );
    expect(messages[2]!.text).toMatch(/^Review the next change\.\n\n<jr2-turn>/);
    await h.app.close();
  });
});

describe("a Turn against a scripted vLLM-style upstream", () => {
  let upstream: ScriptedUpstream;
  beforeEach(async () => {
    upstream = await startScriptedUpstream();
  });
  afterEach(async () => {
    await upstream.close();
  });

  it("streams reasoning with the answer, a cut attempt as not replayed, and the model's raw argument bytes", async () => {
    const h = upstreamHarness(upstream, orch);
    orch.answer = () => pickAnswer({ allowed: [], turnComplete: true });
    const raw = '{ "summary" : "looks fine" }';
    const picked = answer({
      reasoning: "The diff is small; approve it.",
      toolCalls: [{ id: "call_a", name: "approve", arguments: raw }],
    });
    upstream.script([{ sse: picked.slice(0, 3), end: "cut" }, { sse: picked }]);
    const { events, settlement } = await h.run("r1/coder/reasoning", { turnId: "t-2" });
    expect(settlement.outcome).toBe("completed");
    expect(upstream.bodies).toHaveLength(2);
    const answers = ofKind(events, "answer");
    expect(answers).toHaveLength(2);
    const [cut, kept] = answers;
    expect(cut).toMatchObject({
      replayed: false,
      attempt: 1,
      model: "sim",
      error: expect.stringMatching(/^stream-cut: /),
    });
    expect(cut!.toolCalls.every((c) => c.disposition === "not-run")).toBe(true);
    expect(kept).toMatchObject({
      replayed: true,
      attempt: 2,
      reasoning: "The diff is small; approve it.",
      finishReason: "tool_calls",
      toolCalls: [
        {
          id: "call_a",
          name: "approve",
          rawArguments: raw,
          replayedArguments: '{"summary":"looks fine"}',
          disposition: "pick",
        },
      ],
    });
    // The cut attempt is streamed with its retry, before the answer the conversation kept.
    const order = events
      .filter((e) => e.type === "retry" || e.type === "transcript")
      .map((e) =>
        e.type === "retry"
          ? "retry"
          : `${e.entry.kind}${e.entry.kind === "answer" ? `:${e.entry.replayed}` : ""}`,
      );
    expect(order).toEqual(["prefix", "message", "retry", "answer:false", "answer:true"]);
    // One request body, sent twice: its message streamed once.
    expect(ofKind(events, "message")).toHaveLength(1);
    expect(ofKind(events, "message")[0]!.json).toBe(JSON.stringify(messagesOf(upstream.bodies[0]!)[1]));
    await h.app.close();
  });
  it("tags what the Harness steered and decided: continue, restatement, an invented call's receipt", async () => {
    const h = upstreamHarness(upstream, orch);
    let picks = 0;
    orch.answer = () =>
      ++picks === 1
        ? // The answer's Allowed picks differ from the surface read at the boundary: restated.
          pickAnswer({ allowed: ["request_changes"], turnComplete: false })
        : pickAnswer({ allowed: [], turnComplete: true });
    upstream.script([
      // Cut at the output limit with no call: the Harness asks it to go on.
      { sse: answer({ content: "Let me think about this at length", finish: "length" }) },
      {
        sse: answer({
          toolCalls: [
            { id: "call_0", name: "run_tests", arguments: "{}" },
            { id: "call_1", name: "approve", arguments: '{"summary":"ok"}' },
          ],
        }),
      },
      { sse: answer({ toolCalls: [{ id: "call_0", name: "approve", arguments: '{"summary":"ok"}' }] }) },
    ]);
    const { events, settlement } = await h.run("r1/coder/steered", { turnId: "t-3" });
    expect(settlement.outcome).toBe("completed");
    expect(upstream.bodies).toHaveLength(3);
    const messages = ofKind(events, "message");
    const last = messagesOf(upstream.bodies[2]!);
    expect(messages.map((m) => m.json)).toEqual(last.slice(1).map((m) => JSON.stringify(m)));
    expect(messages.map((m) => `${m.role}:${m.part}`)).toEqual([
      "user:prompt",
      "assistant:answer",
      "user:continue",
      "assistant:answer",
      "tool:receipt",
      "tool:receipt",
      "user:restatement",
    ]);
    expect(messages.slice(4, 6).map((m) => m.toolName)).toEqual(["run_tests", "approve"]);
    const answers = ofKind(events, "answer");
    expect(answers.map((a) => a.finishReason)).toEqual(["length", "tool_calls", "tool_calls"]);
    expect(answers[1]!.toolCalls).toEqual([
      expect.objectContaining({ name: "run_tests", disposition: "invented", reason: expect.any(String) }),
      expect.objectContaining({ name: "approve", disposition: "pick" }),
    ]);
    await h.app.close();
  });
});
