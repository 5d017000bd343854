/**
 * A type test, checked by `pnpm typecheck:tests`, never run (issue 14, ADR-0010): correct code
 * that compiled before typing (caa7d5f) and an adversarial review found failing after it. Each
 * form here must keep compiling, except the two pinned "what fails now" forms (ADR-0010) and the
 * wrong code that must fail, each under a `@ts-expect-error`.
 */
import { expectTypeOf } from "vitest";
import { assign } from "xstate";
import { z } from "zod";
import { agent, defineEvent, jr2Setup } from "../../src/index.js";

const approve = defineEvent({
  name: "approve",
  description: "A.",
  input: z.object({ summary: z.string() }),
  audience: "agent",
});
const request_changes = defineEvent({
  name: "request_changes",
  description: "R.",
  input: z.object({ comments: z.array(z.string()) }),
});
const note = defineEvent({ name: "note", description: "N.", audience: "agent" });
const coder = agent({ model: "coder", instructions: "Code." });

// R1 (what fails now): a context that starts empty infers `never[]` / `null`; widen it in place.
export const r1 = jr2Setup({ events: [approve], actors: { coder } }).createMachine({
  context: { summaries: [] as string[], last: null as string | null },
  initial: "a",
  states: {
    a: {
      invoke: { src: "coder", input: { prompt: "p" } },
      on: {
        approve: {
          actions: assign({
            summaries: ({ context, event }) => [...context.summaries, event.summary],
            last: ({ event }) => event.summary,
          }),
        },
        "agent.fault": "a",
      },
    },
  },
});
export const r1Unwidened = jr2Setup({ events: [approve], actors: { coder } }).createMachine({
  context: { summaries: [] },
  initial: "a",
  states: {
    a: {
      invoke: { src: "coder", input: { prompt: "p" } },
      on: {
        // @ts-expect-error `summaries` was inferred `never[]` from `[]`: write `[] as string[]`.
        approve: { actions: assign({ summaries: ({ event }) => [event.summary] }) },
        "agent.fault": "a",
      },
    },
  },
});

// R2 an invoke input mapper (state entered only via request_changes) reads the payload defensively.
export const r2 = jr2Setup({ events: [approve, request_changes], actors: { coder } }).createMachine({
  initial: "review",
  states: {
    review: {
      invoke: { src: "coder", input: { prompt: "review" } },
      on: { request_changes: "fix", approve: "done", "agent.fault": "done" },
    },
    fix: {
      invoke: {
        src: "coder",
        input: ({ event }) => {
          expectTypeOf(event.comments).toEqualTypeOf<string[] | undefined>();
          return { prompt: `Fix: ${event.comments?.join("\n") ?? ""}` };
        },
      },
      on: { approve: "done", "agent.fault": "done" },
    },
    done: { type: "final" },
  },
});

// R3 an inline entry action reads a field only some events have, defensively; `on` still narrows.
export const r3 = jr2Setup({ events: [approve, request_changes], actors: { coder } }).createMachine({
  context: { log: "" },
  initial: "a",
  states: {
    a: {
      entry: assign({ log: ({ event }) => String(event.summary ?? "") }),
      invoke: { src: "coder", input: { prompt: "p" } },
      on: {
        approve: { actions: assign({ log: ({ event }) => event.summary }) },
        // @ts-expect-error request_changes has no `summary`: on its key it is absent (`undefined`).
        request_changes: { actions: assign({ log: ({ event }) => String(event.summary.length) }) },
        "agent.fault": "a",
      },
    },
    b: {
      // @ts-expect-error an entry action sees every event: `summary` may be absent.
      entry: assign({ log: ({ event }) => String(event.summary.length) }),
    },
  },
});

// R4 (what fails now): a state's meta kept in a variable widens `outcome` to string; `as const`.
const succeeded = { outcome: "succeeded" } as const;
export const r4 = jr2Setup({ events: [] }).createMachine({
  initial: "a",
  states: { a: { type: "final", meta: succeeded } },
});
const widened = { outcome: "succeeded" };
export const r4Widened = jr2Setup({ events: [] }).createMachine({
  initial: "a",
  // @ts-expect-error `outcome` is `string` here, not `"succeeded" | "failed"`: write `as const`.
  states: { a: { type: "final", meta: widened } },
});

// R5 a named assign action in a Machine that declares no actors (a Gate-only workflow).
export const r5 = jr2Setup({
  events: [note],
  actions: { bump: assign({ n: ({ context }) => context.n + 1 }) },
}).createMachine({
  context: { n: 0 },
  initial: "a",
  states: {
    a: {
      // The named action leaves the context to the config: it is `{ n: number }`, not loose.
      entry: ({ context }) => expectTypeOf(context).toEqualTypeOf<{ n: number }>(),
      invoke: { src: "gate", id: "g" },
      on: { note: { actions: "bump" } },
    },
  },
});

// R6 a named assign action with the context declared in `types` (as the README advises).
export const r6 = jr2Setup({
  events: [note],
  types: {} as { context: { n: number } },
  actors: { coder },
  actions: { bump: assign({ n: ({ context }) => context.n + 1 }) },
}).createMachine({ context: { n: 0 }, initial: "a", states: { a: { on: { note: { actions: "bump" } } } } });

// T2 a static Turn input kept in a variable: its unknown key fails tsc, not the load.
const good = { prompt: "p", cwd: "/tmp" };
export const t2Good = jr2Setup({ events: [], actors: { coder } }).createMachine({
  initial: "a",
  states: { a: { invoke: { src: "coder", input: good }, on: { "agent.fault": "a" } } },
});
const inp = { prompt: "p", sandbox: "/tmp" };
// @ts-expect-error `sandbox` is no Turn input key.
export const t2 = jr2Setup({ events: [], actors: { coder } }).createMachine({
  initial: "a",
  states: { a: { invoke: { src: "coder", input: inp }, on: { "agent.fault": "a" } } },
});
