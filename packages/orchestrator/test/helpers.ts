import type { AnyActorRef } from "xstate";
import { z } from "zod";
import { agent, defineEvent, jr2Setup } from "../src/index.js";

/** The Turn actor (Agent slot) of `agentName` among the invoker's children. */
export function turnOf(invoker: AnyActorRef, agentName: string): AnyActorRef {
  const children = Object.values(invoker.getSnapshot().children ?? {}) as AnyActorRef[];
  const turn = children.find(
    (c) => (c.getSnapshot() as { input?: { agentName?: string } }).input?.agentName === agentName,
  );
  if (!turn) throw new Error(`no live Turn of ${agentName}`);
  return turn;
}

export const coder = () => agent({ model: "m", instructions: "code" });

/** A few defs for small machines. */
export const defs = {
  finish: defineEvent({ name: "finish", description: "Finish.", audience: "agent" }),
  note: defineEvent({ name: "note", description: "Note." }),
  escalate: defineEvent({
    name: "escalate",
    description: "Escalate.",
    input: z.object({ severity: z.enum(["low", "high"]) }),
  }),
  submit: defineEvent({ name: "submit", description: "Submit.", input: z.object({ text: z.string() }) }),
  approve: defineEvent({ name: "approve", description: "Approve." }),
  merge: defineEvent({ name: "merge", description: "Merge.", audience: "gate" }),
};

const finishDef = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });

/** One Agent (`worker`) in `working`; `finish` or any `agent.fault` ends the run in `done`. */
export function oneTurnMachine() {
  return jr2Setup({
    events: [finishDef],
    actors: { worker: agent({ model: "m", instructions: "work" }) },
  }).createMachine({
    id: "one-turn",
    initial: "working",
    states: {
      working: {
        invoke: { src: "worker", input: { prompt: "Work." } },
        on: { finish: "done", "agent.fault": "done" },
      },
      done: { type: "final" },
    },
  });
}

/** One Agent (`worker`) whose `agent.fault` transition never takes it: the fault is unrouted. */
export function unroutedFaultMachine() {
  return jr2Setup({
    events: [finishDef],
    actors: { worker: agent({ model: "m", instructions: "work" }) },
  }).createMachine({
    id: "unrouted",
    initial: "working",
    states: {
      working: {
        invoke: { src: "worker", input: { prompt: "p" } },
        on: { finish: "done", "agent.fault": { guard: () => false, target: "done" } },
      },
      done: { type: "final" },
    },
  });
}
