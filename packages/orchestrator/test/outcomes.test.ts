import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Jr2Error, RunDetail, RunSummary } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import {
  agent,
  createMemoryStore,
  createRunHost,
  defineEvent,
  jr2Setup,
  machineInfoOf,
  openSqliteStore,
  type TurnContext,
  type TurnDriver,
} from "../src/index.js";
import { unroutedFaultMachine } from "./helpers.js";

// Run outcomes (issue 11 item 2, ADR-0062).
const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
const worker = () => agent({ model: "m", instructions: "work" });

/** A driver whose every Turn does `act` once started. */
function driverDoing(act: (context: TurnContext) => void): TurnDriver {
  return { start: (context) => (queueMicrotask(() => act(context)), () => {}) };
}

const faultRouted = jr2Setup({ events: [finish], actors: { worker: worker() } }).createMachine({
  id: "routed",
  initial: "working",
  states: {
    working: {
      invoke: { src: "worker", input: { prompt: "p" } },
      on: { finish: "done", "agent.fault": "failed" },
    },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});

function hostOf(act: (context: TurnContext) => void, machine = faultRouted) {
  return createRunHost({
    workflows: new Map([[machine.id, machine]]),
    turnDriver: driverDoing(act),
    store: createMemoryStore(),
  });
}

describe("run outcomes", () => {
  it("a fault routed to a `failed` final state reports outcome failed with the fault's Turn, reason and cause", async () => {
    const host = hostOf((c) => c.fault("infra", "the model endpoint is gone", "unavailable"));
    const { runId } = await host.startRun("routed", undefined);
    const detail = RunDetail.parse(await host.getRun(runId));
    expect(detail).toMatchObject({ status: "done", outcome: "failed", finalState: "failed", input: null });
    expect(detail.faults).toEqual([
      {
        agent: "worker",
        state: "working",
        turnId: expect.any(String),
        reason: "infra",
        cause: "unavailable",
        detail: "the model endpoint is gone",
        routed: true,
        at: expect.any(String),
      },
    ]);
    const summary = (await host.listRuns()).map((s) => RunSummary.parse(s));
    expect(summary).toEqual([expect.objectContaining({ runId, outcome: "failed", finalState: "failed" })]);
    const last = (await host.feedOf(runId)).since().at(-1);
    expect(last).toMatchObject({ type: "status", status: "done", value: "failed", outcome: "failed" });
    expect(await host.listRuns({ outcome: "succeeded" })).toEqual([]);
    await host.close();
  });

  it("a final state declaring no outcome succeeds (the fault routed there is still kept)", async () => {
    const plain = jr2Setup({ events: [finish], actors: { worker: worker() } }).createMachine({
      id: "plain",
      initial: "working",
      states: {
        working: {
          invoke: { src: "worker", input: { prompt: "p" } },
          on: { finish: "done", "agent.fault": "done" },
        },
        done: { type: "final" },
      },
    });
    expect(machineInfoOf(plain).warnings.map((w) => w.code)).toEqual(["JR2_WARN_OUTCOME_UNDECLARED"]);
    const host = hostOf((c) => c.fault("deadline"), plain);
    const { runId } = await host.startRun("plain", undefined);
    const detail = await host.getRun(runId);
    expect(detail).toMatchObject({ status: "done", outcome: "succeeded", finalState: "done" });
    expect(detail.faults).toEqual([expect.objectContaining({ reason: "deadline", routed: true })]);
    await host.close();
  });

  it("an unrouted fault faults the run (outcome faulted) and is kept as not routed", async () => {
    const unrouted = unroutedFaultMachine();
    const host = hostOf((c) => c.fault("no-signal"), unrouted);
    const { runId } = await host.startRun("unrouted", undefined);
    const detail = await host.getRun(runId);
    expect(detail).toMatchObject({ status: "faulted", outcome: "faulted" });
    expect(detail.faults).toEqual([
      expect.objectContaining({ agent: "worker", reason: "no-signal", routed: false }),
    ]);
    await host.close();
  });

  it("a cancelled run reports cancelled; a running one no outcome but its open Gates", async () => {
    const gated = jr2Setup({ events: [finish] }).createMachine({
      id: "gated",
      initial: "asking",
      states: {
        asking: { invoke: { src: "gate", id: "ask_gate" }, on: { finish: "done" } },
        done: { type: "final" },
      },
    });
    const host = createRunHost({ workflows: new Map([["gated", gated]]) });
    const { runId } = await host.startRun("gated", undefined);
    const [running] = await host.listRuns();
    expect(running).toMatchObject({ runId, status: "running", gates: ["ask_gate"] });
    expect(running?.outcome).toBeUndefined();
    expect((await host.getRun(runId)).outcome).toBeUndefined();
    await host.cancelRun(runId);
    expect(await host.getRun(runId)).toMatchObject({ status: "cancelled", outcome: "cancelled" });
    expect((await host.feedOf(runId)).since().at(-1)).toMatchObject({
      status: "cancelled",
      outcome: "cancelled",
    });
    await host.close();
  });

  it("a parallel root fails when a region ends in a failed final state", async () => {
    const parallel = jr2Setup({ events: [finish], actors: { worker: worker() } }).createMachine({
      id: "parallel",
      type: "parallel",
      states: {
        work: {
          initial: "working",
          states: {
            working: {
              invoke: { src: "worker", input: { prompt: "p" } },
              on: { finish: "ok", "agent.fault": "escalated" },
            },
            ok: { type: "final" },
            escalated: { type: "final", meta: { outcome: "failed" } },
          },
        },
        other: { initial: "end", states: { end: { type: "final" } } },
      },
    });
    const host = hostOf((c) => c.fault("deadline"), parallel);
    const { runId } = await host.startRun("parallel", undefined);
    expect(await host.getRun(runId)).toMatchObject({
      outcome: "failed",
      finalState: { work: "escalated", other: "end" },
    });
    await host.close();
  });
});

describe("outcomes across a restart", () => {
  it("a fault routed before the restart is still listed, and the outcome is stored by the SQLite store", async () => {
    const retry = defineEvent({ name: "retry", description: "Try again.", audience: "gate" });
    const giveUp = defineEvent({ name: "give_up", description: "Give up.", audience: "gate" });
    const machine = jr2Setup({ events: [finish, retry, giveUp], actors: { worker: worker() } }).createMachine(
      {
        id: "retrying",
        initial: "working",
        states: {
          working: {
            invoke: { src: "worker", input: { prompt: "p" } },
            on: { finish: "done", "agent.fault": "asking" },
          },
          asking: { invoke: { src: "gate", id: "ask_gate" }, on: { retry: "working", give_up: "failed" } },
          done: { type: "final", meta: { outcome: "succeeded" } },
          failed: { type: "final", meta: { outcome: "failed" } },
        },
      },
    );
    const dir = mkdtempSync(join(tmpdir(), "jr2-outcomes-"));
    try {
      const workflows = new Map([["retrying", machine]]);
      const first = createRunHost({
        workflows,
        store: openSqliteStore(dir),
        turnDriver: driverDoing((c) => c.fault("infra", "down", "unavailable")),
      });
      const { runId } = await first.startRun("retrying", undefined);
      expect((await first.getRun(runId)).faults).toHaveLength(1);
      await first.close();
      const second = createRunHost({
        workflows,
        store: openSqliteStore(dir),
        turnDriver: driverDoing(() => {}),
      });
      await second.restore();
      await second.sendGateEvent(runId, "ask_gate", { type: "give_up" });
      const detail = await second.getRun(runId);
      expect(detail).toMatchObject({ status: "done", outcome: "failed", finalState: "failed" });
      expect(detail.faults).toEqual([
        expect.objectContaining({ agent: "worker", state: "working", cause: "unavailable" }),
      ]);
      await second.close();
      // Settled: read back from the store alone, by its outcome column.
      const third = createRunHost({ workflows, store: openSqliteStore(dir) });
      await third.restore();
      expect((await third.listRuns({ outcome: "failed" })).map((r) => r.runId)).toEqual([runId]);
      expect((await third.getRun(runId)).faults).toHaveLength(1);
      await third.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("declaring outcomes at load", () => {
  const build = (meta: unknown) =>
    jr2Setup({ events: [finish], actors: { worker: worker() } }).createMachine({
      id: "m",
      initial: "working",
      states: {
        working: {
          invoke: { src: "worker", input: { prompt: "p" } },
          on: { finish: "done", "agent.fault": "failed" },
        },
        done: { type: "final" },
        // biome-ignore lint/suspicious/noExplicitAny: a refused value on purpose
        failed: { type: "final", meta: meta as any },
      },
    });

  it("refuses a meta.outcome other than succeeded or failed, naming the state and the value", () => {
    let caught: unknown;
    try {
      build({ outcome: "fail" });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(Jr2Error);
    expect((caught as Jr2Error).code).toBe("JR2_ERR_SETUP_OUTCOME_INVALID");
    expect((caught as Error).message).toContain("`failed`");
    expect((caught as Error).message).toContain('"fail"');
  });

  it("warns where an agent.fault target declares no outcome, and not once it does", () => {
    const { warnings } = machineInfoOf(build(undefined));
    expect(warnings.map((w) => w.code)).toEqual(["JR2_WARN_OUTCOME_UNDECLARED"]);
    expect(warnings[0]?.message).toContain("`failed`");
    expect(machineInfoOf(build({ outcome: "failed" })).warnings).toEqual([]);
    expect(machineInfoOf(build({ outcome: "succeeded", question: "x" })).warnings).toEqual([]);
  });

  it("counts only the root's top-level final states", () => {
    const nested = jr2Setup({ events: [finish], actors: { worker: worker() } }).createMachine({
      id: "nested",
      initial: "outer",
      states: {
        outer: {
          initial: "working",
          states: {
            working: {
              invoke: { src: "worker", input: { prompt: "p" } },
              on: { finish: "inner", "agent.fault": "inner" },
            },
            // biome-ignore lint/suspicious/noExplicitAny: not a top-level final state: not checked
            inner: { type: "final", meta: { outcome: "whatever" } as any },
          },
          onDone: "done",
        },
        done: { type: "final" },
      },
    });
    expect(machineInfoOf(nested).warnings).toEqual([]);
  });
});
