/**
 * Regression, issue 10 §3 ("Fault detail"): every provider failure ended as a bare
 * `agent.fault { reason: "infra" }` (or "runaway: 4 identical consecutive tool calls" for an
 * answer cut at `maxTokens`), and an admission the Harness refused for an unknown model
 * showed the raw HTTP body. Root cause: the Orchestrator read only `settlement.error.type`
 * and quoted refusals verbatim. Fixed: the settlement's `error.cause` rides the fault as
 * `cause` beside its class (context-overflow, bad-request, unknown-model, unavailable,
 * stream-cut → infra; output-limit → runaway), the Harness's message is kept as the detail,
 * and `JR2_ERR_MODEL_UNKNOWN` reads as cause `unknown-model` with a detail saying how to add
 * the model. A failed Submission is never nudged, whatever its cause.
 */
import type { FaultCause } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { assign } from "xstate";
import {
  agent,
  createMemoryStore,
  createRunHost,
  defineEvent,
  faultGuard,
  jr2Setup,
} from "../../src/index.js";
import { type ScriptedEvent, startFakeHarness } from "../fake-harness-server.js";
import { feedOf, hostOn, until } from "../host-on-fake-harness.js";

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });

/** Records the fault it routes in context; an `infra` without a cause routes apart. */
function machineFor(model: string) {
  return jr2Setup({
    events: [finish],
    actors: { writer: agent({ model, instructions: "Write.", workspace: "none" }) },
  }).createMachine({
    id: "causes",
    context: { fault: null as unknown },
    initial: "writing",
    states: {
      writing: {
        invoke: { src: "writer", input: { prompt: "Write." } },
        on: {
          finish: "done",
          "agent.fault": [
            {
              guard: faultGuard((fault) => fault.cause !== undefined),
              target: "routedOnCause",
              actions: assign({ fault: ({ event }) => ({ reason: event.reason, cause: event.cause }) }),
            },
            { target: "failed", actions: assign({ fault: ({ event }) => ({ reason: event.reason }) }) },
          ],
        },
      },
      done: { type: "final" },
      routedOnCause: { type: "final" },
      failed: { type: "final" },
    },
  });
}

const failedWith = (error: { type: string; message: string; cause?: string }): ScriptedEvent[] => [
  { type: "submission-settled", outcome: "failed", error },
];

const MESSAGE =
  "model `m` at http://127.0.0.1:8000/v1: 400 This model's maximum context length is 4096 tokens";

describe("agent.fault carries the settlement's cause (issue 10 §3)", () => {
  it.each<[FaultCause, string]>([
    ["context-overflow", "infra"],
    ["bad-request", "infra"],
    ["unknown-model", "infra"],
    ["unavailable", "infra"],
    ["stream-cut", "infra"],
    ["output-limit", "runaway"],
  ])("cause %s → reason %s, the Harness's message kept, never nudged", async (cause, reason) => {
    const fake = await startFakeHarness({
      script: () => ({ kind: "events", events: failedWith({ type: "provider", message: MESSAGE, cause }) }),
    });
    const host = hostOn(fake, machineFor("m"));
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect(fake.admissions).toHaveLength(1);
    expect((await host.getRun(runId)).context).toEqual({ fault: { reason, cause } });
    expect(await feedOf(host, runId, "fault")).toEqual([
      expect.objectContaining({ child: "writing#writer", reason, cause, detail: MESSAGE }),
    ]);
    await host.close();
    await fake.close();
  });

  it("an older Harness's failure without a cause keeps the seed mapping (runaway by type), and an unknown future cause reads as none", async () => {
    for (const [error, reason] of [
      [{ type: "runaway", message: "4 identical consecutive tool calls" }, "runaway"],
      [{ type: "provider", message: "boom", cause: "solar-flare" }, "infra"],
    ] as const) {
      const fake = await startFakeHarness({ script: () => ({ kind: "events", events: failedWith(error) }) });
      const host = hostOn(fake, machineFor("m"));
      const { runId } = await host.startRun("w", {});
      await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
      expect((await host.getRun(runId)).value).toBe("failed");
      expect((await host.getRun(runId)).context).toEqual({ fault: { reason } });
      expect((await feedOf(host, runId, "fault"))[0]?.cause).toBeUndefined();
      await host.close();
      await fake.close();
    }
  });

  it("an unrouted fault faults the run, and RunDetail.fault carries the cause", async () => {
    const unrouted = jr2Setup({
      events: [finish],
      actors: { writer: agent({ model: "m", instructions: "Write.", workspace: "none" }) },
    }).createMachine({
      initial: "writing",
      states: {
        writing: {
          invoke: { src: "writer", input: { prompt: "Write." } },
          on: { finish: "done", "agent.fault": { guard: () => false, target: "done" } },
        },
        done: { type: "final" },
      },
    });
    const fake = await startFakeHarness({
      script: () => ({
        kind: "events",
        events: failedWith({ type: "provider", message: MESSAGE, cause: "context-overflow" }),
      }),
    });
    const store = createMemoryStore();
    const host = hostOn(fake, unrouted, {}, { ...store, close: async () => {} });
    const { runId } = await host.startRun("w", {});
    await until("the run to fault", async () => (await host.getRun(runId)).status === "faulted");
    expect((await host.getRun(runId)).fault).toMatchObject({ cause: "context-overflow", detail: MESSAGE });
    await host.close();
    // The cause is saved with the run: a restarted host reads it back.
    const again = createRunHost({
      workflows: new Map([["w", unrouted]]),
      store: { ...store, close: async () => {} },
    });
    await again.restore();
    expect((await again.getRun(runId)).fault).toMatchObject({ cause: "context-overflow", detail: MESSAGE });
    await again.close();
    await fake.close();
  });
});

describe("an admission refused for an unknown model (issue 10 §5)", () => {
  it("faults infra with cause unknown-model and a detail naming the model, the Harness's models and how to add it", async () => {
    const { createServer } = await import("node:http");
    // The real Harness's refusal body (packages/harness/src/routes/conversations.ts).
    const refusal = {
      model: "writer",
      known: ["m", "sim"],
      field: "definition.model",
      error: "unknown model `writer`; configured models: m, sim",
      code: "JR2_ERR_MODEL_UNKNOWN",
    };
    const server = createServer((req, res) => {
      const status = req.url === "/healthz" ? 200 : 400;
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(status === 200 ? { ok: true, version: "fake", bootId: "b1" } : refusal));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const host = hostOn({ url }, machineFor("writer"));
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect((await host.getRun(runId)).context).toEqual({
      fault: { reason: "infra", cause: "unknown-model" },
    });
    const [fault] = await feedOf(host, runId, "fault");
    expect(fault).toMatchObject({ reason: "infra", cause: "unknown-model" });
    expect(fault?.detail).toContain(`the Harness at ${url} has no model \`writer\` (Agent \`writer\`)`);
    expect(fault?.detail).toContain("its models: m, sim");
    expect(fault?.detail).toContain("JR2_MODELS");
    expect(fault?.detail).not.toContain("{"); // words, not a raw HTTP body
    await host.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("any other 4xx refusal is cause bad-request, its error text kept and a raw non-jr2 body bounded", async () => {
    const fake = { url: "" };
    const { createServer } = await import("node:http");
    const server = createServer((req, res) => {
      if (req.url === "/healthz") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: true, version: "fake" }));
        return;
      }
      res.writeHead(422, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: "x".repeat(5_000) }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    fake.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const host = hostOn(fake, machineFor("m"));
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    const [fault] = await feedOf(host, runId, "fault");
    expect(fault).toMatchObject({ reason: "infra", cause: "bad-request" });
    expect(fault?.detail).toContain("HTTP 422");
    expect(fault?.detail?.length).toBeLessThan(600);
    await host.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
});
