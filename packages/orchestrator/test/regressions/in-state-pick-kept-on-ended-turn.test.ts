/**
 * A Turn that made a delivered pick keeping it in its state (an in-state move) and then ended
 * otherwise (here a timer) keeps that pick on its record: `left`, with the pick. Found by an
 * adversary: the state's exit wrote `left` with `pick: null`, erasing a pick the run log holds
 * as delivered. ADR-0296 "The last pick stays".
 */
import { describe, expect, it } from "vitest";
import { assign } from "xstate";
import { createMemoryStore } from "../../src/durability/store/run-store.js";
import { agent, createRunHost, defineEvent, INSTANCE_CALLER, jr2Setup } from "../../src/index.js";
import { until } from "../host-on-fake-harness.js";

const note = defineEvent({ name: "note", description: "Note progress.", audience: "agent" });
const machine = jr2Setup({
  events: [note],
  actors: { worker: agent({ model: "m", instructions: "work" }) },
}).createMachine({
  id: "m",
  initial: "work",
  context: { notes: 0 },
  states: {
    work: {
      invoke: { src: "worker", input: { prompt: "Work." } },
      on: {
        note: { actions: assign({ notes: ({ context }) => (context as { notes: number }).notes + 1 }) },
        "agent.fault": "done",
      },
      after: { 300: "done" },
    },
    done: { type: "final" },
  },
} as never);

describe("an in-state pick, then the state left by a timer", () => {
  it("keeps the pick on the Turn's record, which ends left", async () => {
    const stored = createMemoryStore();
    const host = createRunHost({ workflows: new Map([["m", machine]]), store: stored });
    const { runId } = await host.startRun("m", {});
    await until("the Turn", async () => (await host.getRun(runId)).turns.length === 1);
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    const answer = await host.deliverPick(iid, INSTANCE_CALLER, {
      name: "note",
      arguments: { text: "half done" },
      toolCallId: "c1",
    });
    expect(answer).toMatchObject({ delivered: true, turnComplete: false });
    await until("the timer ended the run", async () => (await host.getRun(runId)).status !== "running");
    await host.close();
    const turns = await stored.turns(runId);
    expect(turns.map((t) => [t.outcome, t.pick, t.endedAt !== null])).toEqual([
      ["left", { name: "note", arguments: { text: "half done" } }, true],
    ]);
  });
});
