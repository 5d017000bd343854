/**
 * Persistence and restore (SPEC §8) with the memory and the SQLite store: a run is saved,
 * its host shut down (or dropped, as a crash would), and a second host restores it. Turns
 * run the real mechanics (`startTurn`) against a fake Harness that records admissions.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { assign } from "xstate";
import { createMemoryStore, type RunStore } from "../src/durability/store/run-store.js";
import { openSqliteStore } from "../src/durability/store/sqlite.js";
import { agent, createRunHost, defineEvent, INSTANCE_CALLER, jr2Setup } from "../src/index.js";
import { pendingDelayedEvents } from "../src/xstate/adapter.js";
import { neverSettlingHarness, placement } from "./never-settling-harness.js";

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
const note = defineEvent({
  name: "note",
  description: "Note something; the Turn goes on.",
  audience: "agent",
});
const approve = defineEvent({ name: "approve", description: "Approve.", audience: "gate" });

/** A Turn (continued conversation), a mode pick, an `after` timer, then a Gate with an authored id. */
function durableMachine(timeoutMs = 3_600_000, extraState = false) {
  return jr2Setup({
    events: [finish, note, approve],
    actors: { worker: agent({ model: "m", instructions: "work" }) },
  }).createMachine({
    id: "durable",
    context: { notes: 0 },
    initial: "working",
    states: {
      working: {
        invoke: { src: "worker", input: { prompt: "Do the work.", continue: true } },
        after: { [timeoutMs]: "timedOut" },
        on: {
          note: { actions: assign({ notes: ({ context }) => context.notes + 1 }) },
          finish: "waiting",
          "agent.fault": "failed",
        },
      },
      waiting: { invoke: { src: "gate", id: "approve_gate" }, on: { approve: "done" } },
      done: { type: "final" },
      timedOut: { type: "final" },
      failed: { type: "final" },
      ...(extraState ? { extra: {} } : {}),
    },
  });
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A store that survives "the process": memory shared by reference, or SQLite reopened from disk. */
const stores = {
  memory() {
    const shared = createMemoryStore();
    // The host closes its store; the memory one keeps its rows for the next "process".
    return () => ({ ...shared, close: async () => {} }) satisfies RunStore;
  },
  sqlite() {
    const dir = mkdtempSync(join(tmpdir(), "jr2-restore-"));
    dirs.push(dir);
    return () => openSqliteStore(dir);
  },
};

/** Resolves once `check` holds after some settled change of the host's runs (no sleeps). */
async function until(check: () => boolean | Promise<boolean>, label: string): Promise<void> {
  for (let i = 0; i < 400 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5));
  if (!(await check())) throw new Error(`never reached: ${label}`);
}

describe.each(Object.keys(stores) as Array<keyof typeof stores>)("restore with the %s store (§8)", (kind) => {
  async function hostPair(machine = durableMachine()) {
    const open = stores[kind]();
    const harness = neverSettlingHarness();
    const first = createRunHost({
      workflows: new Map([["durable", machine]]),
      store: open(),
      turnDriver: harness.driver,
      placement,
    });
    await first.restore();
    const { runId } = await first.startRun("durable", {});
    await until(() => harness.admissions.length === 1, "first admission");
    const iid = (await first.getRun(runId)).turns[0]!.iid;
    await until(() => first.registrations.get(iid) !== undefined, "registration");
    const restart = async (next = machine) => {
      await first.close();
      const second = createRunHost({
        workflows: new Map([["durable", next]]),
        store: open(),
        turnDriver: harness.driver,
        placement,
      });
      const report = await second.restore();
      return { second, report };
    };
    return { first, runId, iid, harness, restart, open };
  }

  it("re-attaches a restored mid-Turn run to its ledgered admission (no second admit, no abort), and delivers the pick after restore", async () => {
    const { runId, iid, harness, restart } = await hostPair();
    const { second, report } = await restart();
    expect(report.restored).toEqual([runId]);
    expect((await second.getRun(runId)).turns.map((t) => t.iid)).toEqual([iid]);
    expect(harness.admissions).toHaveLength(1);
    expect(harness.aborts).toEqual([]);

    const answer = await second.deliverPick(iid, INSTANCE_CALLER, {
      name: "finish",
      arguments: {},
      toolCallId: "c1",
    });
    expect(answer).toMatchObject({ delivered: true, moved: true, turnComplete: true });
    expect((await second.getRun(runId)).value).toBe("waiting");
    await second.close();
  });

  it("never re-attaches to an admission with another Turn's turnId: the restored Turn is admitted again (§5.4)", async () => {
    const { first, runId, iid, harness, restart, open } = await hostPair();
    await first.close();
    const store = open();
    const blob = (await store.load(runId))!;
    const own = blob.ledger[iid]!;
    expect(own.turnId).toBe(harness.admissions[0]!.body.turnId);
    // As if the crash came between the admit and its ledger write, after an earlier Turn on this conversation.
    await store.save({ ...blob, ledger: { [iid]: { ...own, turnId: "an-earlier-turn" } } });
    await store.close();
    const { second } = await restart();
    await until(() => harness.admissions.length === 2, "the second admission");
    expect(harness.admissions[1]!.body).toMatchObject({
      kind: "task",
      prompt: "Do the work.",
      turnId: own.turnId,
    });
    expect(harness.aborts).toEqual([]);
    await second.close();
  });

  it("answers a tool-call id repeated after a restart with the stored answer; it never reaches the Machine again", async () => {
    const { first, runId, iid, restart } = await hostPair();
    const answer = await first.deliverPick(iid, INSTANCE_CALLER, {
      name: "note",
      arguments: {},
      toolCallId: "c7",
    });
    expect(answer.delivered).toBe(true);
    const { second } = await restart();
    const repeat = await second.deliverPick(iid, INSTANCE_CALLER, {
      name: "note",
      arguments: {},
      toolCallId: "c7",
    });
    expect(repeat).toEqual(answer);
    expect((await second.getRun(runId)).context).toEqual({ notes: 1 });
    await second.close();
  });

  it("re-opens a Gate with the same id after a restart, and the Gate answer finishes the run", async () => {
    const { first, runId, iid, restart } = await hostPair();
    await first.deliverPick(iid, INSTANCE_CALLER, { name: "finish", arguments: {}, toolCallId: "c1" });
    expect((await first.listGates(runId)).map((g) => g.id)).toEqual(["approve_gate"]);
    const { second } = await restart();
    expect((await second.listGates(runId)).map((g) => g.id)).toEqual(["approve_gate"]);
    await second.sendGateEvent(runId, "approve_gate", { type: "approve" });
    expect((await second.getRun(runId)).status).toBe("done");
    await second.close();
  });

  it("re-arms a saved `after` timer with its remaining delay; it fires after the restart", async () => {
    const machine = durableMachine(400);
    const { runId, restart } = await hostPair(machine);
    const { second, report } = await restart();
    expect(report.timers).toBe(1);
    await until(async () => (await second.getRun(runId)).value === "timedOut", "the timer fired");
    expect((await second.getRun(runId)).status).toBe("done");
    await second.close();
  });

  it("keeps a long timer's due time across the restart (re-armed, not restarted)", async () => {
    const { first, runId, restart } = await hostPair();
    const before = pendingDelayedEvents(runActorSystem(first, runId));
    const { second } = await restart();
    const after = pendingDelayedEvents(runActorSystem(second, runId));
    expect(after).toHaveLength(1);
    expect(after[0]!.id).toBe(before[0]!.id);
    expect(after[0]!.startedAt + after[0]!.delay).toBeLessThanOrEqual(
      before[0]!.startedAt + before[0]!.delay + 5,
    );
    await second.close();
  });

  it("marks a run whose Machine changed shape drifted: reported, readable, never restored", async () => {
    const { runId, harness, restart } = await hostPair();
    const { second, report } = await restart(durableMachine(3_600_000, true));
    expect(report.drifted.map((d) => d.runId)).toEqual([runId]);
    expect(await second.getRun(runId)).toMatchObject({ status: "drifted", value: "working" });
    expect((await second.listRuns("drifted")).map((r) => r.runId)).toEqual([runId]);
    expect(second.registrations.ofRun(runId)).toEqual([]);
    expect(harness.admissions).toHaveLength(1);
    await second.close();
  });

  it("restores a run whose stored conversation history cannot be read: without it, never faulted (ADR-0176)", async () => {
    const { first, runId, iid, harness, open } = await hostPair();
    await first.close();
    const store = open();
    const second = createRunHost({
      workflows: new Map([["durable", durableMachine()]]),
      store: {
        ...store,
        conversationHistory: {
          writeHistory: async () => {},
          histories: async () => {
            throw new Error("conversation_history: permission denied");
          },
        },
      },
      turnDriver: harness.driver,
      placement,
    });
    const report = await second.restore();
    expect(report.restored).toEqual([runId]);
    expect((await second.getRun(runId)).status).toBe("running");
    const answer = await second.deliverPick(iid, INSTANCE_CALLER, {
      name: "finish",
      arguments: {},
      toolCallId: "c1",
    });
    expect(answer).toMatchObject({ delivered: true, moved: true });
    await second.close();
  });

  it("keeps a settled run readable after a restart", async () => {
    const { first, runId, iid, restart } = await hostPair();
    await first.deliverPick(iid, INSTANCE_CALLER, { name: "finish", arguments: {}, toolCallId: "c1" });
    await first.sendGateEvent(runId, "approve_gate", { type: "approve" });
    const { second, report } = await restart();
    expect(report.restored).toEqual([]);
    expect(await second.getRun(runId)).toMatchObject({ status: "done", value: "done" });
    expect((await second.listRuns("done")).map((r) => r.runId)).toEqual([runId]);
    await second.close();
  });
});

/** The actor system of a live run (white-box: the re-armed scheduler). */
function runActorSystem(host: ReturnType<typeof createRunHost>, runId: string) {
  const turn = host.registrations.ofRun(runId)[0];
  if (!turn) throw new Error("no live Turn");
  return turn.turnActor.system;
}
