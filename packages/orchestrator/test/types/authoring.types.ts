/**
 * A type test, checked by `pnpm typecheck:tests` (tsconfig.tests.json), never run: a workflow
 * author's inline guards, `onDone` guards and `output` mappers type-check under strict TS
 * without annotations — events and context are typed loosely on purpose (a guard may read any
 * payload field). A newcomer hit "Binding element 'event' implicitly has an 'any' type" here.
 */
import { agent, defineEvent, jr2Setup } from "../../src/index.js";

const go = defineEvent({ name: "go", description: "Go." });
const stop = defineEvent({ name: "stop", description: "Stop." });

export const machine = jr2Setup({
  events: [go, stop],
  actors: { a: agent({ model: "m", instructions: "i" }) },
  guards: { named: ({ event }) => event.n > 0 },
}).createMachine({
  id: "typed",
  // A context factory names its input's type (xstate types `input` from the Machine's, here loose).
  context: ({ input }: { input: { task?: string } | undefined }) => ({ task: input?.task ?? "" }),
  initial: "x",
  states: {
    x: {
      invoke: {
        src: "a",
        input: ({ context }) => ({ prompt: `Do ${context.task}.` }),
        onDone: { guard: ({ event }) => event.output === 1, target: "y" },
      },
      on: {
        go: { guard: ({ event }) => event.n > 1, target: "y" },
        // An annotated guard names the event's `type` beside the fields it reads.
        stop: {
          guard: ({ event }: { event: { type: string; severity?: string } }) => event.severity === "high",
          target: "y",
        },
        "agent.fault": "y",
      },
    },
    y: { type: "final" },
  },
  output: ({ event }) => event.output,
});
