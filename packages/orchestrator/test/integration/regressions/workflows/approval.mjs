/**
 * One reviewer Agent on a scripted upstream (the forged-tool-name regression): `approve` ends
 * the run. Plain JS (`.mjs`): the loader aliases @jr2/orchestrator, zod and xstate to the host's own.
 */
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
import { z } from "zod";

const approve = defineEvent({
  name: "approve",
  description: "Approve the change.",
  input: z.object({ summary: z.string() }),
  audience: "agent",
});

export const machine = jr2Setup({
  events: [approve],
  actors: {
    reviewer: agent({ model: "scripted", instructions: "You review changes.", workspace: "none" }),
  },
}).createMachine({
  id: "approval",
  initial: "review",
  states: {
    review: {
      invoke: { src: "reviewer", input: { prompt: "Review the change." } },
      on: { approve: "approved", "agent.fault": "failed" },
    },
    approved: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
