/**
 * A Turn whose pick commits while the Orchestrator shuts down stays `picked` in its record.
 * Found by CI (stop 33: cluster-breaks' rolling restart): the run log held the reviewer's
 * delivered `request_changes`, but `GET /runs/:runId/turns` listed that Turn `left` with no pick.
 * Root cause: the picked record was queued after the pick's save committed, and a shutdown that
 * began while the save was in flight refused the queued write (a SIGKILL in that window lost it
 * too). Now the pick's save carries the Turn's record in its own transaction, and a record queued
 * earlier (`left`, from the state's exit) cannot undo it.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore, type RunStore } from "../../src/durability/store/run-store.js";
import { agent, createRunHost, defineEvent, INSTANCE_CALLER, jr2Setup } from "../../src/index.js";
import { until } from "../host-on-fake-harness.js";

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
const machine = jr2Setup({
  events: [finish],
  actors: { worker: agent({ model: "m", instructions: "work" }) },
}).createMachine({
  id: "once",
  initial: "work",
  states: {
    work: {
      invoke: { src: "worker", input: { prompt: "Work." } },
      on: { finish: "done", "agent.fault": "done" },
    },
    done: { type: "final" },
  },
});

/** A store whose saves carrying a pick answer wait for `release()` (the commit held in flight). */
function heldPickSaves(store: RunStore) {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let waiting = false;
  const wrapped: RunStore = {
    ...store,
    async save(blob, picks, ...rest) {
      if (picks?.length) {
        waiting = true;
        await held;
      }
      return store.save(blob, picks, ...rest);
    },
  };
  return { store: wrapped, release, waiting: () => waiting };
}

describe("a pick whose save commits during shutdown", () => {
  it("leaves its Turn's record picked, with the pick", async () => {
    const stored = createMemoryStore();
    const held = heldPickSaves(stored);
    const host = createRunHost({ workflows: new Map([["once", machine]]), store: held.store });
    const { runId } = await host.startRun("once", {});
    await until("the Turn", async () => (await host.getRun(runId)).turns.length === 1);
    const iid = (await host.getRun(runId)).turns[0]!.iid;

    const picked = host
      .deliverPick(iid, INSTANCE_CALLER, { name: "finish", arguments: { ok: true }, toolCallId: "c1" })
      .catch(() => undefined);
    await until("the pick's save in flight", held.waiting);
    const closed = host.close();
    await new Promise((r) => setTimeout(r, 20));
    held.release();
    await Promise.all([picked, closed]);

    const turns = await stored.turns(runId);
    expect(turns.map((t) => [t.agent, t.outcome, t.pick])).toEqual([
      ["worker", "picked", { name: "finish", arguments: { ok: true } }],
    ]);
  });
});
