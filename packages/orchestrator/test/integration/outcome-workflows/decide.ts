/**
 * A Gate-only workflow for the CLI's outcomes (ADR-0062): `decide_gate` asks a question;
 * `approve` (a required `note`) ends in `done` (succeeded), `reject` in `rejected` (failed).
 * No Agent, so `jr2 serve --harness none` runs it to the end from the CLI alone.
 */
import { defineEvent, jr2Setup } from "@jr2/orchestrator";
import { z } from "zod";

const approve = defineEvent({
  name: "approve",
  description: "Approve it.",
  input: z.object({ note: z.string().min(1) }),
  audience: "gate",
});
const reject = defineEvent({ name: "reject", description: "Reject it.", audience: "gate" });

export const machine = jr2Setup({ events: [approve, reject] }).createMachine({
  id: "decide",
  initial: "deciding",
  states: {
    deciding: {
      invoke: { src: "gate", id: "decide_gate", input: { meta: { question: "Ship it?" } } },
      on: { approve: "done", reject: "rejected" },
    },
    done: { type: "final", meta: { outcome: "succeeded" } },
    rejected: { type: "final", meta: { outcome: "failed" } },
  },
});
