/**
 * The console suite's retry workflow (issue 13 item 5): one `mender` Turn whose model endpoint
 * is a closed 127.0.0.1 port, so it faults `unavailable` and the fault is routed to `failed` —
 * a run the console offers Retry on. Plain JS (`.mjs`): the loader aliases @jr2/orchestrator.
 */
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";

const finish = defineEvent({ name: "finish", description: "Say the work is done.", audience: "agent" });

export const machine = jr2Setup({
  events: [finish],
  actors: { mender: agent({ model: "mender", instructions: "You mend things." }) },
}).createMachine({
  id: "mend",
  initial: "mending",
  states: {
    mending: {
      invoke: { src: "mender", input: { prompt: "Mend the thing.", continue: true } },
      on: { finish: "done", "agent.fault": "failed" },
    },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
