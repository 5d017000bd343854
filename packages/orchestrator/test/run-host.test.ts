import { Jr2Error } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { fromCallback } from "xstate";
import {
  agent,
  createRunHost,
  defineEvent,
  INSTANCE_CALLER,
  jr2Setup,
  runBindingOf,
  type TurnContext,
  type TurnDriver,
} from "../src/index.js";
import { unroutedFaultMachine } from "./helpers.js";
import { flow } from "./http/fixture.js";

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
const worker = () => agent({ model: "m", instructions: "work" });

/** A Turn driver that records each Turn it was handed and whether it was stopped. */
function recordingDriver(onStart?: (context: TurnContext) => void) {
  const turns: Array<{ context: TurnContext; stopped: boolean }> = [];
  const driver: TurnDriver = {
    start(context) {
      const entry = { context, stopped: false };
      turns.push(entry);
      onStart?.(context);
      return () => {
        entry.stopped = true;
      };
    },
  };
  return { driver, turns };
}

async function codeOf(promise: Promise<unknown> | (() => unknown)): Promise<string | undefined> {
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (error) {
    return error instanceof Jr2Error ? error.code : `not coded: ${String(error)}`;
  }
  return undefined;
}

describe("the run host", () => {
  it("hands each registered Turn to the Turn driver and stops it, then deregisters, when the state exits", async () => {
    const { driver, turns } = recordingDriver();
    const host = createRunHost({ workflows: new Map([["flow", flow]]), turnDriver: driver });
    const { runId } = await host.startRun("flow", { task: "t" });
    expect(turns).toHaveLength(1);
    const [turn] = turns;
    const iid = turn!.context.registration.iid;
    expect(turn!.context.registration).toMatchObject({
      runId,
      agent: "worker",
      statePath: "working",
      scope: "instance",
    });
    expect(turn!.context.isOpen()).toBe(true);
    expect(turn!.context.allowed()).toEqual(["check", "escalate", "finish", "note"]);

    turn!.context.telemetry({ type: "retry", attempt: 1, reason: "stream dropped" });
    expect((await host.feedOf(runId)).since().at(-1)).toMatchObject({
      type: "retry",
      child: "working#worker",
      attempt: 1,
    });

    const answer = await host.deliverPick(iid, INSTANCE_CALLER, {
      name: "finish",
      arguments: { summary: "s" },
      toolCallId: "x",
    });
    expect(answer.turnComplete).toBe(true);
    expect(turn!.stopped).toBe(true);
    expect(turn!.context.isOpen()).toBe(false);
    expect(turn!.context.allowed()).toEqual([]);
    expect(host.registrations.get(iid)).toBeUndefined();
    await host.close();
  });

  it("faults the run when an agent.fault is taken by no transition, recording the reason", async () => {
    const machine = unroutedFaultMachine();
    const { driver } = recordingDriver((context) => queueMicrotask(() => context.fault("no-signal")));
    const host = createRunHost({ workflows: new Map([["unrouted", machine]]), turnDriver: driver });
    const { runId } = await host.startRun("unrouted", undefined);
    const run = await host.getRun(runId);
    expect(run.status).toBe("faulted");
    expect(run.fault?.reason).toContain("no-signal");
    expect((await host.feedOf(runId)).since().at(-1)).toMatchObject({ type: "status", status: "faulted" });
    expect(host.registrations.ofRun(runId)).toEqual([]);
    await host.close();
  });

  it("refuses a second live registration of one continued conversation; that invocation faults naming both states", async () => {
    const machine = jr2Setup({ events: [finish], actors: { worker: worker() } }).createMachine({
      id: "twice",
      type: "parallel",
      states: {
        left: {
          initial: "a",
          states: {
            a: {
              invoke: { src: "worker", input: { prompt: "left", continue: true } },
              // Both regions hear every agent.fault; only the right one takes the conflict.
              on: {
                "agent.fault": {
                  guard: ({ event }) => event.reason !== "conflict",
                  target: "faulted",
                },
              },
            },
            faulted: {},
          },
        },
        right: {
          initial: "b",
          states: {
            b: {
              invoke: { src: "worker", input: { prompt: "right", continue: true } },
              on: { "agent.fault": "faulted" },
            },
            faulted: {},
          },
        },
      },
    });
    const host = createRunHost({ workflows: new Map([["twice", machine]]) });
    const { runId } = await host.startRun("twice", undefined);
    const run = await host.getRun(runId);
    expect(run.value).toEqual({ left: "a", right: "faulted" });
    expect(run.turns).toEqual([expect.objectContaining({ state: "left.a" })]);
    const fault = (await host.feedOf(runId)).since().find((e) => e.type === "fault");
    expect(fault).toMatchObject({ child: "right.b#worker" });
    expect((await host.getRun(runId)).status).toBe("running");
    expect(fault).toMatchObject({ reason: "conflict" });
    expect(fault && "detail" in fault ? fault.detail : "").toMatch(/left\.a.*right\.b/);
    await host.close();
  });

  it("serves a sandbox-scoped Turn to its own sandbox's token only; another sandbox gets TURN_NOT_FOUND", async () => {
    // A hand-made slot registering with a sandbox, as placement will (§5.2).
    const sandboxed = fromCallback(({ self, system, sendBack }) => {
      const stop = runBindingOf(system)?.startTurn({
        self,
        input: {
          agentName: "worker",
          iid: "r/box/worker",
          turnId: "t1",
          tools: [],
          prompt: "p",
          continuation: false,
          sandbox: "ws-a",
        },
        definition: { model: "m", instructions: "i", workspace: "write" },
        sendBack,
      });
      return () => stop?.();
    });
    const machine = jr2Setup({ events: [finish], actors: { sandboxed } }).createMachine({
      id: "boxed",
      initial: "on",
      states: { on: { invoke: { src: "sandboxed" } } },
    });
    const host = createRunHost({ workflows: new Map([["boxed", machine]]) });
    await host.startRun("boxed", undefined);
    expect(host.readSurface("r/box/worker", { kind: "sandbox", sandbox: "ws-a" })).toMatchObject({
      turnId: "t1",
    });
    expect(host.readSurface("r/box/worker", INSTANCE_CALLER).iid).toBe("r/box/worker");
    expect(await codeOf(() => host.readSurface("r/box/worker", { kind: "sandbox", sandbox: "ws-b" }))).toBe(
      "JR2_ERR_TURN_NOT_FOUND",
    );
    expect(
      await codeOf(
        host.deliverPick(
          "r/box/worker",
          { kind: "sandbox", sandbox: "ws-b" },
          { name: "finish", toolCallId: "z" },
        ),
      ),
    ).toBe("JR2_ERR_TURN_NOT_FOUND");
    await host.close();
  });

  it("decides concurrent repeats of one toolCallId once: both get the same answer, the Machine sees one pick", async () => {
    const host = createRunHost({ workflows: new Map([["flow", flow]]) });
    const { runId } = await host.startRun("flow", { task: "t" });
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    const pick = { name: "note", arguments: {}, toolCallId: "dup" };
    const [a, b] = await Promise.all([
      host.deliverPick(iid, INSTANCE_CALLER, pick),
      host.deliverPick(iid, INSTANCE_CALLER, pick),
    ]);
    expect(a).toEqual(b);
    expect(((await host.getRun(runId)).context as { notes: number }).notes).toBe(1);
    await host.close();
  });

  it("records status changes on the feed, with the state entered as value, and cancels", async () => {
    const at = new Date("2030-01-02T03:04:05.000Z");
    const host = createRunHost({ workflows: new Map([["flow", flow]]), clock: () => at });
    const { runId } = await host.startRun("flow", { task: "t" });
    expect(await codeOf(host.startRun("flow", { task: 3 }))).toBe("JR2_ERR_RUN_INPUT_INVALID");
    expect(await host.cancelRun(runId)).toEqual({ runId, status: "cancelled" });
    expect(await codeOf(host.cancelRun(runId))).toBe("JR2_ERR_RUN_NOT_LIVE");
    const statuses = (await host.feedOf(runId)).since().filter((e) => e.type === "status");
    expect(statuses.map((e) => (e.type === "status" ? [e.status, e.value] : []))).toEqual([
      ["running", { working: "idle" }],
      ["cancelled", { working: "idle" }],
    ]);
    expect(host.registrations.ofRun(runId)).toEqual([]);
    expect(await host.listRuns("cancelled")).toEqual([
      {
        runId,
        workflow: "flow",
        status: "cancelled",
        updatedAt: at.toISOString(),
        outcome: "cancelled",
        finalState: { working: "idle" },
      },
    ]);
    expect(statuses.every((e) => e.at === at.toISOString())).toBe(true);
    await host.close();
  });

  it("announces a Gate on the feed, with its acceptsNow, once it opened", async () => {
    const host = createRunHost({ workflows: new Map([["flow", flow]]) });
    const { runId } = await host.startRun("flow", { task: "t" });
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    await host.deliverPick(iid, INSTANCE_CALLER, { name: "note", arguments: {}, toolCallId: "1" });
    await host.deliverPick(iid, INSTANCE_CALLER, {
      name: "finish",
      arguments: { summary: "s" },
      toolCallId: "2",
    });
    // Settled notifications run one event-loop turn after the burst.
    await new Promise((resolve) => setImmediate(resolve));
    const gates = (await host.feedOf(runId)).since().flatMap((e) => (e.type === "gate" ? [e.gate] : []));
    expect(gates).toEqual([expect.objectContaining({ id: "review_gate", acceptsNow: ["reject"] })]);
    await host.close();
  });

  it("reseats a lost continued conversation on its next epoch: the surface moves, the old iid is gone", async () => {
    const machine = jr2Setup({ events: [finish], actors: { worker: worker() } }).createMachine({
      id: "cont",
      initial: "working",
      states: {
        working: {
          invoke: { src: "worker", input: { prompt: "p", continue: true } },
          on: { finish: "done", "agent.fault": "done" },
        },
        done: { type: "final" },
      },
    });
    const { driver, turns } = recordingDriver();
    const host = createRunHost({ workflows: new Map([["cont", machine]]), turnDriver: driver });
    const { runId } = await host.startRun("cont", undefined);
    const context = turns[0]!.context;
    const before = context.registration;
    expect(before.iid).toBe(`${runId}/worker`);

    const iid = context.reseat();
    expect(iid).toBe(`${runId}/worker/1`);
    expect(context.registration).not.toBe(before);
    expect(context.isOpen()).toBe(true);
    expect(host.readSurface(iid, INSTANCE_CALLER).allowed).toEqual(["finish"]);
    expect(await codeOf(() => host.readSurface(before.iid, INSTANCE_CALLER))).toBe("JR2_ERR_TURN_NOT_FOUND");

    const answer = await host.deliverPick(iid, INSTANCE_CALLER, { name: "finish", toolCallId: "r" });
    expect(answer).toMatchObject({ delivered: true, turnComplete: true });
    expect(host.registrations.get(iid)).toBeUndefined();
    await host.close();
  });

  it("answers 503 on the agent routes once closing", async () => {
    const host = createRunHost({ workflows: new Map([["flow", flow]]) });
    const { runId } = await host.startRun("flow", { task: "t" });
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    await host.close();
    expect(await codeOf(() => host.readSurface(iid, INSTANCE_CALLER))).toBe("JR2_ERR_SERVICE_STOPPING");
  });
});
