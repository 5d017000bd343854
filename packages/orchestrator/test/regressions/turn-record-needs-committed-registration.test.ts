/**
 * A Turn record never describes a Turn whose registration was not committed (ADR-0296
 * "Registration first"). Found by an adversary: a pick's cascade registers the next Turn, whose
 * `running` record went out on the pending-rows queue within a tick; when the pick's save then
 * failed (a kill before the commit, a shutdown refusing it), the restart delivered the pick again
 * and minted a new turnId for that Turn — the first record stayed `running` forever, a Turn of no
 * committed state. Now such a record, and a Turn's end, ride the run's next save of its state.
 * Found with it: a save queued behind the pick's failed save (the cascade's) still committed the
 * state that pick produced, with no answer stored; a frozen run's queued saves now write nothing.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore, type RunStore } from "../../src/durability/store/run-store.js";
import {
  agent,
  createRunHost,
  defineEvent,
  INSTANCE_CALLER,
  jr2Setup,
  type TurnContext,
} from "../../src/index.js";
import { until } from "../host-on-fake-harness.js";

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
const approve = defineEvent({ name: "approve", description: "Approve.", audience: "agent" });
const machine = jr2Setup({
  events: [finish, approve],
  actors: {
    worker: agent({ model: "m", instructions: "work" }),
    reviewer: agent({ model: "m", instructions: "review" }),
  },
}).createMachine({
  id: "two",
  initial: "work",
  states: {
    work: {
      invoke: { src: "worker", input: { prompt: "Work." } },
      on: { finish: "review", "agent.fault": "done" },
    },
    review: {
      invoke: { src: "reviewer", input: { prompt: "Review." } },
      on: { approve: "done", "agent.fault": "done" },
    },
    done: { type: "final" },
  },
});
const workflows = new Map([["two", machine]]);

/** A store whose first save carrying a pick waits for `fail()`, then throws (never committed). */
function failingPickSave(store: RunStore) {
  let fail = () => {};
  const failed = new Promise<void>((resolve) => {
    fail = resolve;
  });
  let waiting = false;
  const wrapped: RunStore = {
    ...store,
    async save(blob, picks, ...rest) {
      if (picks?.length && !waiting) {
        waiting = true;
        await failed;
        throw new Error("the process is gone (killed before the commit)");
      }
      return store.save(blob, picks, ...rest);
    },
  };
  return { store: wrapped, fail, waiting: () => waiting };
}

const summary = async (store: RunStore, runId: string) =>
  (await store.turns(runId)).map((t) => [t.agent, t.outcome, t.pick?.name ?? null]);

describe("a pick whose save never commits", () => {
  it("leaves no record of the Turn its cascade registered: the restart's Turns are the only ones", async () => {
    const stored = createMemoryStore();
    const dying = failingPickSave(stored);
    const host = createRunHost({ workflows, store: dying.store });
    const { runId } = await host.startRun("two", {});
    await until("the worker's Turn", async () => (await host.getRun(runId)).turns.length === 1);
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    const first = host
      .deliverPick(iid, INSTANCE_CALLER, { name: "finish", arguments: {}, toolCallId: "c1" })
      .catch(() => undefined);
    await until("the pick's save in flight", dying.waiting);
    await new Promise((r) => setTimeout(r, 50)); // pending rows would be written by now
    // Neither the worker's end nor the reviewer's start is written before the pick's save commits.
    expect(await summary(stored, runId)).toEqual([["worker", "running", null]]);
    dying.fail();
    await first;
    await host.close().catch(() => undefined);

    const again = createRunHost({ workflows, store: stored });
    await again.restore();
    await until("the worker's Turn again", async () => (await again.getRun(runId)).turns.length === 1);
    const iid2 = (await again.getRun(runId)).turns[0]!.iid;
    await again.deliverPick(iid2, INSTANCE_CALLER, { name: "finish", arguments: {}, toolCallId: "c1" });
    await until("the reviewer's Turn", async () =>
      (await again.getRun(runId)).turns.some((t) => t.agent === "reviewer"),
    );
    const riid = (await again.getRun(runId)).turns.find((t) => t.agent === "reviewer")!.iid;
    await again.deliverPick(riid, INSTANCE_CALLER, { name: "approve", arguments: {}, toolCallId: "c2" });
    await until("done", async () => (await again.getRun(runId)).status !== "running");
    await again.close();
    expect(await summary(stored, runId)).toEqual([
      ["worker", "picked", "finish"],
      ["reviewer", "picked", "approve"],
    ]);
  });

  it("refused at shutdown: the stop writes no record of the next Turn, and the worker's stays running", async () => {
    const stored = createMemoryStore();
    const dying = failingPickSave(stored);
    const host = createRunHost({ workflows, store: dying.store });
    const { runId } = await host.startRun("two", {});
    await until("the worker's Turn", async () => (await host.getRun(runId)).turns.length === 1);
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    const first = host
      .deliverPick(iid, INSTANCE_CALLER, { name: "finish", arguments: {}, toolCallId: "c1" })
      .catch((e: unknown) => e);
    await until("the pick's save in flight", dying.waiting);
    const closed = host.close();
    dying.fail();
    await Promise.all([first, closed.catch(() => undefined)]);
    // The committed run is at `work`: its worker Turn is the only one, still running.
    expect(await summary(stored, runId)).toEqual([["worker", "running", null]]);
  });

  it("still records a committed Turn's reseat, which no save follows", async () => {
    const stored = createMemoryStore();
    const cont = jr2Setup({
      events: [finish],
      actors: { worker: agent({ model: "m", instructions: "w" }) },
    }).createMachine({
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
    const started: TurnContext[] = [];
    const host = createRunHost({
      workflows: new Map([["cont", cont]]),
      store: stored,
      // Handed over once the Turn's registration committed (ADR-0250).
      turnDriver: {
        start(context) {
          started.push(context);
          return () => {};
        },
      },
    });
    const { runId } = await host.startRun("cont", undefined);
    await until("the Turn's driver", async () => started.length === 1);
    const iid = started[0]!.reseat();
    await until("the reseat recorded", async () => (await stored.turns(runId))[0]?.iid === iid);
    await host.close();
    expect((await stored.turns(runId)).map((t) => [t.iid, t.outcome])).toEqual([[iid, "running"]]);
  });
});
