/**
 * Regression, field case C1 (a tool call written as text) and issue 10 §3: a model server
 * without a tool-call parser leaves Hermes `<tool_call>` markup in `content`; the Harness
 * reports it as `textCall: true` on a completed settlement. Root cause: the Orchestrator read
 * it as a plain stop — a generic nudge, then a silent `no-signal` the workflow could not tell
 * from a model that just stopped. Fixed: the nudge carries the `text-call` notice (its own
 * words, rendered by the Harness), each text call is a feed `text-call` event and a warn log,
 * and after the budget the fault is `no-signal` with cause `text-call`, which a workflow routes.
 * Nothing is delivered: the markup is never parsed.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, defineEvent, faultCauseIs, INSTANCE_CALLER, jr2Setup } from "../../src/index.js";
import { type ScriptedEvent, startFakeHarness } from "../fake-harness-server.js";
import { feedOf, hostOn, until } from "../host-on-fake-harness.js";

const approve = defineEvent({
  name: "approve",
  description: "Approve the change.",
  input: z.object({ summary: z.string() }),
  audience: "agent",
});
const request_changes = defineEvent({
  name: "request_changes",
  description: "Ask for changes.",
  input: z.object({ comments: z.array(z.string()) }),
  audience: "agent",
});

/** Review with both picks allowed; a text-call fault and any other fault route apart. */
const machine = jr2Setup({
  events: [approve, request_changes],
  actors: { reviewer: agent({ model: "texter", instructions: "You review changes.", workspace: "none" }) },
}).createMachine({
  id: "c1",
  initial: "review",
  states: {
    review: {
      invoke: { src: "reviewer", input: { prompt: "Review the change." } },
      on: {
        approve: "approved",
        request_changes: "changes",
        "agent.fault": [{ guard: faultCauseIs("text-call"), target: "noToolParser" }, { target: "failed" }],
      },
    },
    approved: { type: "final" },
    changes: { type: "final" },
    noToolParser: { type: "final" },
    failed: { type: "final" },
  },
});

/** What the Harness streams for one model answer that wrote its call as text (`finish_reason: "stop"`). */
const wroteCallAsText: ScriptedEvent[] = [
  { type: "message-appended", role: "assistant", text: "I approve.\n<tool_call>…</tool_call>" },
  { type: "usage", promptTokens: 400, cachedTokens: 384, completionTokens: 30, finishReason: "stop" },
  { type: "submission-settled", outcome: "completed", textCall: true },
];
const stoppedPlainly: ScriptedEvent[] = [
  { type: "message-appended", role: "assistant", text: "I have finished the review." },
  { type: "submission-settled", outcome: "completed" },
];

describe("C1: a tool call written as text", () => {
  it("is never delivered; each nudge carries the text-call notice and the Allowed picks; after the budget (2) agent.fault { no-signal, text-call } is routed", async () => {
    const fake = await startFakeHarness({ script: () => ({ kind: "events", events: wroteCallAsText }) });
    const host = hostOn(fake, machine, { nudgeBudget: 2 });
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");

    const run = await host.getRun(runId);
    expect(run.status).toBe("done");
    expect(run.value).toBe("noToolParser");
    // Asked exactly budget + 1 times: the task, then two nudges with their own words. No loop.
    expect(fake.admissions.map((a) => [a.body.kind, a.body.kept ?? false, a.body.notices ?? []])).toEqual([
      ["task", false, []],
      ["nudge", true, [{ type: "text-call" }]],
      ["nudge", true, [{ type: "text-call" }]],
    ]);
    // Nothing delivered; every ask named both Allowed picks.
    expect(await feedOf(host, runId, "pick")).toEqual([]);
    expect((await feedOf(host, runId, "admission")).map((e) => [e.kind, e.allowed])).toEqual([
      ["task", ["approve", "request_changes"]],
      ["nudge", ["approve", "request_changes"]],
      ["nudge", ["approve", "request_changes"]],
    ]);
    expect(await feedOf(host, runId, "text-call")).toHaveLength(3);
    expect((await feedOf(host, runId, "text-call"))[0]).toMatchObject({
      child: "review#reviewer",
      agent: "reviewer",
    });
    const faults = await feedOf(host, runId, "fault");
    expect(faults).toHaveLength(1);
    expect(faults[0]).toMatchObject({ reason: "no-signal", cause: "text-call" });
    expect(faults[0]?.detail).toMatch(/tool-call parser/);
    expect(faults[0]?.detail).toContain("`texter`");
    await host.close();
    await fake.close();
  });

  it("inside the reasoning (issue 25 §4): the notice, feed event and warn line name the reasoning", async () => {
    const inReasoning: ScriptedEvent[] = [
      { type: "message-appended", role: "assistant", text: "" },
      { type: "submission-settled", outcome: "completed", textCall: true, textCallWhere: "reasoning" },
    ];
    const fake = await startFakeHarness({
      script: (_a, n) => ({ kind: "events", events: n === 0 ? inReasoning : [] }),
    });
    const host = hostOn(fake, machine, { nudgeBudget: 2 });
    const { runId } = await host.startRun("w", {});
    await until("the nudge", async () => fake.admissions.length >= 2);
    expect(fake.admissions[1]?.body.notices).toEqual([{ type: "text-call", where: "reasoning" }]);
    expect(await feedOf(host, runId, "text-call")).toMatchObject([{ where: "reasoning" }]);
    expect(await feedOf(host, runId, "pick")).toEqual([]);
    await host.close();
    await fake.close();
  });

  it("the notice follows only a text call: a plain stop after it is nudged plainly, and its fault has no cause", async () => {
    const fake = await startFakeHarness({
      script: (_a, n) => ({ kind: "events", events: n === 0 ? wroteCallAsText : stoppedPlainly }),
    });
    const host = hostOn(fake, machine, { nudgeBudget: 2 });
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect(fake.admissions.map((a) => a.body.notices ?? [])).toEqual([[], [{ type: "text-call" }], []]);
    expect(await feedOf(host, runId, "text-call")).toHaveLength(1);
    const [fault] = await feedOf(host, runId, "fault");
    expect(fault).toMatchObject({ reason: "no-signal" });
    expect(fault?.cause).toBeUndefined();
    expect((await host.getRun(runId)).value).toBe("failed");
    await host.close();
    await fake.close();
  });

  it("a model that picks after the text-call nudge moves the run on; nothing faults", async () => {
    const fake = await startFakeHarness({
      script: (_a, n) => ({ kind: "events", events: n === 0 ? wroteCallAsText : [] }),
    });
    const host = hostOn(fake, machine, { nudgeBudget: 2 });
    const { runId } = await host.startRun("w", {});
    await until("the nudge", () => fake.admissions.length === 2);
    expect(fake.admissions[1]?.body.notices).toEqual([{ type: "text-call" }]);
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    const answer = await host.deliverPick(iid, INSTANCE_CALLER, {
      name: "approve",
      arguments: { summary: "Looks right." },
      toolCallId: "call-1",
    });
    expect(answer).toMatchObject({ delivered: true, moved: true, turnComplete: true });
    expect((await host.getRun(runId)).value).toBe("approved");
    expect(await feedOf(host, runId, "fault")).toEqual([]);
    await host.close();
    await fake.close();
  });
});
