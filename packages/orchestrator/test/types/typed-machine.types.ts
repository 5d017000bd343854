/**
 * A type test, checked by `pnpm typecheck:tests`, never run (issue 14 item 3, ADR-0010): the
 * context is typed from the context factory (or `types.context`), the run input from
 * `jr2Setup({ input })`, a final state's `meta.outcome` is `"succeeded" | "failed"`, an Agent
 * invoke's `input` is the authored Turn input (an unknown key fails tsc, not the run), and
 * `after` takes the named `delays`. Each `@ts-expect-error` pins a form that must not compile.
 */

import { expectTypeOf } from "vitest";
import { assign } from "xstate";
import { z } from "zod";
import { agent, defineEvent, jr2Setup, workspace } from "../../src/index.js";

const finish = defineEvent({
  name: "finish",
  description: "Finish.",
  input: z.object({ summary: z.string() }),
  audience: "agent",
});
const note = defineEvent({ name: "note", description: "Note.", audience: "agent" });

const setup = jr2Setup({
  events: [finish, note],
  actors: { coder: agent({ model: "coder", instructions: "Code." }) },
  delays: { deadline: 60_000 },
  // `.default` applies before the run starts: the Machine reads the parsed input.
  input: z.object({ task: z.string().default("a greeting"), tries: z.number().optional() }),
});

export const machine = setup.createMachine({
  id: "typed-machine",
  context: ({ input }) => {
    expectTypeOf(input).toEqualTypeOf<{ task: string; tries?: number | undefined }>();
    return { task: input.task, notes: 0, confirmed: false };
  },
  initial: "working",
  states: {
    working: {
      invoke: {
        src: "coder",
        input: ({ context }) => {
          expectTypeOf(context).toEqualTypeOf<{ task: string; notes: number; confirmed: boolean }>();
          return { prompt: `Do ${context.task}.`, continue: true, thinkingLevel: "low" };
        },
      },
      after: { deadline: "timedOut", 3600000: "timedOut" },
      on: {
        // assign widens what the factory returned: `confirmed` is a boolean, not `false`.
        note: { actions: assign({ notes: ({ context }) => context.notes + 1, confirmed: true }) },
        finish: {
          actions: assign({ task: ({ event }) => event.summary }),
          target: "done",
        },
        "agent.fault": "failed",
      },
    },
    done: { type: "final", meta: { outcome: "succeeded" } },
    timedOut: { type: "final", meta: { outcome: "failed", why: "the deadline passed" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});

// A context declared in `types` types the named guards, and the Machine's context is it.
export const declared = jr2Setup({
  events: [note],
  types: {} as { context: { notes: number } },
  guards: { few: ({ context }) => context.notes < 3 },
}).createMachine({
  context: { notes: 0 },
  initial: "a",
  states: {
    a: { on: { note: { guard: "few", actions: assign({ notes: ({ context }) => context.notes + 1 }) } } },
  },
});

// A nested Machine without an `input` schema names its input in `types` (or annotates the factory).
const body = jr2Setup({
  events: [finish],
  actors: { coder: agent({ model: "coder", instructions: "Code.", workspace: "write" }) },
  types: {} as { input: { task: string } },
}).createMachine({
  context: ({ input }) => ({ task: input.task }),
  initial: "coding",
  states: {
    coding: {
      invoke: { src: "coder", input: ({ context }) => ({ prompt: context.task }) },
      on: { finish: "done", "agent.fault": "done" },
    },
    done: { type: "final" },
  },
});
jr2Setup({ events: [], actors: { work: workspace(body) } }).createMachine({
  context: { task: "t" },
  initial: "w",
  states: {
    // A workspace's input mapper is contextually typed; its output is the body's (loose).
    w: { invoke: { src: "work", input: ({ context }) => ({ task: context.task }), onDone: "d" } },
    d: { type: "final" },
  },
});

// ── What must not compile ─────────────────────────────────────────────────────────────────────

// @ts-expect-error an Agent input mapper returning an unknown Turn input key (`system`)
setup.createMachine({
  initial: "w",
  states: {
    w: {
      invoke: { src: "coder", input: () => ({ prompt: "p", system: "You are terse." }) },
      on: { "agent.fault": "f" },
    },
    f: { type: "final" },
  },
});

setup.createMachine({
  context: { n: 0 },
  initial: "w",
  states: {
    w: {
      // @ts-expect-error a static Turn input with an unknown key
      invoke: { src: "coder", input: { prompt: "p", sandbox: "/tmp" } },
      on: { "agent.fault": "f" },
    },
    v: {
      // @ts-expect-error a Turn input of the wrong type: `prompt` is a string
      invoke: { src: "coder", input: ({ context }) => ({ prompt: context.n }) },
      on: { "agent.fault": "f" },
    },
    u: {
      // @ts-expect-error an invoke of an actor that is not declared
      invoke: { src: "codr", input: { prompt: "p" } },
    },
    t: {
      // @ts-expect-error a delay that is not declared
      after: { dedline: "f" },
      // @ts-expect-error the context has no `m`
      on: { note: { guard: ({ context }) => context.m > 0, target: "f" } },
    },
    // @ts-expect-error an outcome is "succeeded" or "failed"
    f: { type: "final", meta: { outcome: "done" } },
  },
});

jr2Setup({ events: [note], input: z.object({ task: z.string() }) }).createMachine({
  // @ts-expect-error the run input has no `report`
  context: ({ input }) => ({ report: input.report }),
});
