/**
 * A small workflow covering every pick answer class and a Gate: `working` (the worker: finish →
 * review, note in-state, escalate guarded on the payload, check enters a mode whose child never
 * settles → busy), `review` (a Gate: approve only without notes, reject → fixing), `fixing` (the
 * same worker picks `fixed`). The HTTP tests import it; the built `jr2 serve` loads it with jiti.
 */
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
import { assign, fromPromise } from "xstate";
import { z } from "zod";

const finish = defineEvent({
  name: "finish",
  description: "Finish the work with a summary.",
  input: z.object({ summary: z.string().min(1) }),
  audience: "agent",
});
const note = defineEvent({ name: "note", description: "Record a note; the work goes on." });
const escalate = defineEvent({
  name: "escalate",
  description: "Escalate the task.",
  input: z.object({ severity: z.enum(["low", "high"]) }),
});
const check = defineEvent({ name: "check", description: "Start a background check.", audience: "agent" });
const fixed = defineEvent({ name: "fixed", description: "Say the fix is done.", audience: "agent" });
const approve = defineEvent({ name: "approve", description: "Approve the work.", audience: "gate" });
const reject = defineEvent({
  name: "reject",
  description: "Send the work back.",
  input: z.object({ reason: z.string().min(1) }),
  audience: "gate",
});

export const machine = jr2Setup({
  events: [finish, note, escalate, check, fixed, approve, reject],
  actors: {
    worker: agent({ model: "m", instructions: "You work on tasks." }),
    background: fromPromise(() => new Promise<never>(() => {})),
  },
  guards: {
    isHigh: ({ event }: { event: { severity?: string } }) => event.severity === "high",
    noNotes: ({ context }: { context: { notes: number } }) => context.notes === 0,
  },
  input: z.object({ task: z.string().min(1) }),
}).createMachine({
  id: "flow",
  context: ({ input }: { input: { task: string } }) => ({ task: input.task, notes: 0 }),
  initial: "working",
  states: {
    working: {
      invoke: {
        src: "worker",
        input: ({ context }: { context: { task: string } }) => ({ prompt: `Do ${context.task}.` }),
      },
      initial: "idle",
      states: {
        idle: { on: { check: "checking" } },
        checking: { invoke: { src: "background" } },
      },
      on: {
        note: {
          actions: assign({ notes: ({ context }: { context: { notes: number } }) => context.notes + 1 }),
        },
        escalate: { guard: "isHigh", target: "escalated" },
        finish: "review",
        "agent.fault": "failed",
      },
    },
    review: {
      invoke: { src: "gate", id: "review_gate", input: { meta: { question: "Is the work good?" } } },
      on: { approve: { guard: "noNotes", target: "done" }, reject: "fixing" },
    },
    fixing: {
      invoke: { src: "worker", input: { prompt: "Fix it." } },
      on: { fixed: "review", "agent.fault": "failed" },
    },
    escalated: { type: "final" },
    done: { type: "final" },
    failed: { type: "final" },
  },
});
