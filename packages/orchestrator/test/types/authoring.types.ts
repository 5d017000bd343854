/**
 * A type test, checked by `pnpm typecheck:tests` (tsconfig.tests.json), never run: a workflow
 * author's inline guards, `onDone` guards and `output` mappers type-check under strict TS
 * without annotations — each gets the event of its `on` key, a named guard the Machine's union
 * (ADR-0010). A newcomer hit "Binding element 'event' implicitly has an 'any' type" here once.
 */
import { z } from "zod";
import { agent, defineEvent, jr2Setup } from "../../src/index.js";

const go = defineEvent({ name: "go", description: "Go.", input: z.object({ n: z.number() }) });
const stop = defineEvent({ name: "stop", description: "Stop." });

export const machine = jr2Setup({
  events: [go, stop],
  actors: { a: agent({ model: "m", instructions: "i" }) },
  // A named guard gets every event of the Machine: it narrows on `type` to read a payload.
  guards: { named: ({ event }) => event.type === "go" && event.n > 0 },
}).createMachine({
  id: "typed",
  // A context factory names its input's type (a Machine without an `input` schema reads it loosely).
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
        // An annotated guard still type-checks: it names the event's `type` beside the fields it reads.
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
