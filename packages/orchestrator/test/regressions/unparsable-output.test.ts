/**
 * Regression (issue 25 §13): llama-server's in-stream peg-format error (the model's output could
 * not be read as a tool call) ended the Turn `infra`/`stream-cut` after byte-identical retries.
 * Root cause: the error was read as the transport's. Fixed: the Harness settles failed with cause
 * `unparsable-output`; the Orchestrator nudges **once** with the `unparsable-output` notice, and
 * a second one ends the Turn `no-signal` / `unparsable-output` with the server's words in the
 * detail. The settlement's message is the Harness's for the recorded body
 * (`../shared/cases/real-servers/llama-server/unparsable_output_stream.response`).
 */
import { FAULT_CAUSE_DOCS } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, defineEvent, faultCauseIs, jr2Setup } from "../../src/index.js";
import { REASON_OF_CAUSE } from "../../src/turns/fault-causes.js";
import { type ScriptedEvent, startFakeHarness } from "../fake-harness-server.js";
import { feedOf, hostOn, until } from "../host-on-fake-harness.js";

const approve = defineEvent({
  name: "approve",
  description: "Approve the change.",
  input: z.object({ summary: z.string() }),
  audience: "agent",
});
const machine = jr2Setup({
  events: [approve],
  actors: { reviewer: agent({ model: "qwen", instructions: "You review changes.", workspace: "none" }) },
}).createMachine({
  id: "u",
  initial: "review",
  states: {
    review: {
      invoke: { src: "reviewer", input: { prompt: "Review the change." } },
      on: {
        approve: "approved",
        "agent.fault": [
          { guard: faultCauseIs("unparsable-output"), target: "unreadable" },
          { target: "failed" },
        ],
      },
    },
    approved: { type: "final" },
    unreadable: { type: "final" },
    failed: { type: "final" },
  },
});

const MESSAGE =
  "model request to http://127.0.0.1:8080/v1/chat/completions (model entry `qwen`, id `qwen3`): the server could not read the model's answer as a tool call — The model produced output that does not match the expected peg-native format";
const unparsable: ScriptedEvent[] = [
  {
    type: "submission-settled",
    outcome: "failed",
    error: { type: "provider", cause: "unparsable-output", message: MESSAGE },
  },
];

describe("output the model server could not parse", () => {
  it("every cause rides the reason docs/reference/errors.md names", () => {
    for (const [cause, reason] of Object.entries(REASON_OF_CAUSE))
      expect(FAULT_CAUSE_DOCS[cause as keyof typeof FAULT_CAUSE_DOCS].reason).toBe(reason);
  });

  it("is nudged once with its notice; the second time the Turn faults no-signal / unparsable-output with the server's words", async () => {
    const fake = await startFakeHarness({ script: () => ({ kind: "events", events: unparsable }) });
    const host = hostOn(fake, machine, { nudgeBudget: 2 });
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect((await host.getRun(runId)).value).toBe("unreadable");
    expect(fake.admissions.map((a) => [a.body.kind, a.body.notices ?? []])).toEqual([
      ["task", []],
      ["nudge", [{ type: "unparsable-output" }]],
    ]);
    const [fault] = await feedOf(host, runId, "fault");
    expect(fault).toMatchObject({ reason: "no-signal", cause: "unparsable-output" });
    expect(fault?.detail).toContain("again after one nudge");
    expect(fault?.detail).toContain("peg-native format");
    expect(await feedOf(host, runId, "pick")).toEqual([]);
    await host.close();
    await fake.close();
  });

  it("a model that picks after the nudge moves the run on; nothing faults", async () => {
    const fake = await startFakeHarness({
      script: (_a, n) => ({ kind: "events", events: n === 0 ? unparsable : [] }),
    });
    const host = hostOn(fake, machine, { nudgeBudget: 2 });
    const { runId } = await host.startRun("w", {});
    await until("the nudge", async () => fake.admissions.length >= 2);
    expect(fake.admissions[1]?.body.notices).toEqual([{ type: "unparsable-output" }]);
    expect(await feedOf(host, runId, "fault")).toEqual([]);
    await host.close();
    await fake.close();
  });
});
