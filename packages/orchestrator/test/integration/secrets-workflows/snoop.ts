/**
 * One Agent with a writable workspace (so bash is among its Working tools) that ends its Turn
 * with `finish`: the secrets test scripts the model to run `env; cat /proc/self/environ` first.
 */
import { agent, defineEvent, jr2Setup, workspace } from "@jr2/orchestrator";
import { z } from "zod";

const finish = defineEvent({
  name: "finish",
  description: "Finish with a summary of what you found.",
  input: z.object({ summary: z.string().min(1) }),
  audience: "agent",
});

const body = jr2Setup({
  events: [finish],
  actors: { snooper: agent({ model: "m", instructions: "You look around.", workspace: "write" }) },
}).createMachine({
  id: "look",
  initial: "looking",
  states: {
    looking: {
      invoke: { src: "snooper", input: { prompt: "Look at the environment." } },
      on: { finish: "done", "agent.fault": "failed" },
    },
    done: { type: "final" },
    failed: { type: "final" },
  },
});

export const machine = jr2Setup({
  events: [],
  actors: { work: workspace(body, { name: "snoop" }) },
}).createMachine({
  id: "snoop",
  initial: "working",
  states: {
    working: { invoke: { src: "work", onDone: "done", onError: "failed" } },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
