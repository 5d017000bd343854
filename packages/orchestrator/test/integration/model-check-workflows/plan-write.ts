/**
 * A newcomer's workflow (issue 10 §5): a `planner` Agent plans, a `writer` Agent writes, and
 * the `polish` state asks the writer for a Turn on a model given in its static Turn input.
 * The model-check test serves it against a Harness whose table has none of these names.
 */
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
import { z } from "zod";

const planned = defineEvent({ name: "planned", description: "The plan is ready.", audience: "agent" });
const written = defineEvent({ name: "written", description: "The text is written.", audience: "agent" });

export const machine = jr2Setup({
  events: [planned, written],
  actors: {
    planner: agent({ model: "planner", instructions: "You plan articles." }),
    writer: agent({ model: "writer", instructions: "You write articles." }),
  },
  input: z.object({ topic: z.string().min(1) }),
}).createMachine({
  id: "plan-write",
  context: ({ input }: { input: { topic: string } }) => ({ topic: input.topic }),
  initial: "planning",
  states: {
    planning: {
      invoke: {
        src: "planner",
        input: ({ context }: { context: { topic: string } }) => ({ prompt: `Plan ${context.topic}.` }),
      },
      on: { planned: "writing", "agent.fault": "failed" },
    },
    writing: {
      invoke: { src: "writer", input: { prompt: "Write it." } },
      on: { written: "polish", "agent.fault": "failed" },
    },
    polish: {
      invoke: { src: "writer", input: { prompt: "Polish it.", model: "editor" } },
      on: { written: "done", "agent.fault": "failed" },
    },
    done: { type: "final" },
    failed: { type: "final" },
  },
});
