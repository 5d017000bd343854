/**
 * A type test, checked by `pnpm typecheck:tests`, never run (issue 14 item 3, ADR-0010): each
 * event of `jr2Setup({ events })` is `{ type: name, sender } & z.infer<input>`. An inline guard
 * or action gets the event of its `on` key; a named one the Machine's union unless declared
 * with `guard(def, …)` / `action(def, …)`; `agent.fault` and an invoke's done/error events are
 * typed too. Each `@ts-expect-error` pins a form that must not compile.
 */

import type { FaultCause } from "@jr2/wire";
import { expectTypeOf } from "vitest";
import { raise } from "xstate";
import { z } from "zod";
import { action, agent, defineEvent, type EventOf, guard, jr2Setup, type Sender } from "../../src/index.js";

const approve = defineEvent({
  name: "approve",
  description: "Approve.",
  input: z.object({ summary: z.string() }),
  audience: "agent",
});
const request_changes = defineEvent({
  name: "request_changes",
  description: "Ask for changes.",
  input: z.object({ comments: z.array(z.string()) }),
});
const merge = defineEvent({ name: "merge", description: "Merge.", audience: "gate" });
const tick = defineEvent({ name: "tick", description: "Raised by the workflow.", audience: "internal" });

// defineEvent keeps the literal name and the zod input in the def's type.
expectTypeOf(approve.name).toEqualTypeOf<"approve">();
expectTypeOf<EventOf<typeof request_changes>>().toEqualTypeOf<
  { type: "request_changes" } & { sender: Sender } & { comments: string[] }
>();
// An event without input has no payload; an internal one carries no sender.
expectTypeOf<EventOf<typeof merge>>().toEqualTypeOf<{ type: "merge" } & { sender: Sender }>();
expectTypeOf<EventOf<typeof tick>>().toEqualTypeOf<{ type: "tick" }>();

const review = jr2Setup({
  events: [approve, request_changes, merge, tick],
  actors: { reviewer: agent({ model: "reviewer", instructions: "Review." }) },
  guards: {
    // Declared for its event: the payload is typed, no narrowing needed.
    hasComments: guard(request_changes, ({ event }) => event.comments.length > 0),
    // The union: narrow on `type` …
    approvedWithSummary: ({ event }) => event.type === "approve" && event.summary.length > 0,
    // … or read a field before narrowing: absent from the other events, so possibly undefined.
    anyComments: ({ event }) => {
      expectTypeOf(event.comments).toEqualTypeOf<string[] | undefined>();
      return (event.comments?.length ?? 0) > 0;
    },
    // An annotated guard that reads an optional field accepts every event.
    annotated: ({ event }: { event: { comments?: string[] } }) => (event.comments?.length ?? 0) > 0,
    fromGate: ({ event }) => event.sender?.kind === "gate",
  },
  actions: {
    logComments: action(request_changes, ({ event }) => {
      expectTypeOf(event.comments).toEqualTypeOf<string[]>();
    }),
  },
});

export const machine = review.createMachine({
  id: "typed-events",
  initial: "reviewing",
  states: {
    reviewing: {
      invoke: { src: "reviewer", input: { prompt: "Review." } },
      on: {
        approve: {
          guard: ({ event }) => {
            expectTypeOf(event.summary).toEqualTypeOf<string>();
            expectTypeOf(event.sender).toEqualTypeOf<Sender>();
            return event.summary.length > 0;
          },
          target: "awaitingMerge",
        },
        request_changes: [
          { guard: "hasComments", actions: "logComments", target: "reviewing", reenter: true },
          {
            guard: ({ event }) => {
              expectTypeOf(event.comments).toEqualTypeOf<string[]>();
              return event.sender.kind === "agent";
            },
            actions: ({ event }) => expectTypeOf(event.type).toEqualTypeOf<"request_changes">(),
            target: "reviewing",
          },
        ],
        tick: {
          guard: ({ event }) => {
            // An internal event: no sender, the other events' keys absent (ADR-0010).
            expectTypeOf(event.type).toEqualTypeOf<"tick">();
            expectTypeOf(event.sender).toEqualTypeOf<undefined>();
            expectTypeOf(event.summary).toEqualTypeOf<undefined>();
            return true;
          },
        },
        "agent.fault": [
          {
            guard: ({ event }) => {
              expectTypeOf(event.cause).toEqualTypeOf<FaultCause | undefined>();
              expectTypeOf(event.sender).toEqualTypeOf<{ kind: "agent"; name: string; iid: string }>();
              return event.reason === "infra" && event.cause === "context-overflow";
            },
            target: "failed",
          },
          { target: "failed" },
        ],
      },
    },
    awaitingMerge: {
      // The workflow raises its internal events itself: they carry no sender.
      entry: raise({ type: "tick" }),
      invoke: {
        src: "gate",
        id: "merge_gate",
        onError: { guard: ({ event }) => event.error !== undefined, target: "failed" },
      },
      on: { merge: { guard: ({ event }) => event.sender.kind !== "agent", target: "done" } },
    },
    done: { type: "final" },
    failed: { type: "final" },
  },
});

// ── What must not compile ─────────────────────────────────────────────────────────────────────

review.createMachine({
  initial: "r",
  states: {
    r: {
      invoke: { src: "reviewer", input: { prompt: "Review." } },
      on: {
        request_changes: [
          // @ts-expect-error a misspelt payload field
          { guard: ({ event }) => event.coments.length > 0, target: "done" },
          // @ts-expect-error a payload field of another event (`summary` is approve's)
          { guard: ({ event }) => event.summary.length > 0, target: "done" },
          // @ts-expect-error a wrong type: `comments` is string[], not string
          { guard: ({ event }) => event.comments === "LGTM", target: "done" },
        ],
        // @ts-expect-error "timeout" is no FaultCause (the comparison has no overlap)
        "agent.fault": { guard: ({ event }) => event.cause === "timeout", target: "done" },
      },
    },
    done: { type: "final" },
  },
});

jr2Setup({
  events: [approve, request_changes],
  guards: {
    // @ts-expect-error a misspelt field in a guard declared for its event
    misspelt: guard(request_changes, ({ event }) => event.coments.length > 0),
    // @ts-expect-error another event's field in a guard declared for its event
    otherEvents: guard(request_changes, ({ event }) => event.summary.length > 0),
    // @ts-expect-error a named guard reads the union: `summary` may be absent until narrowed
    unnarrowed: ({ event }) => event.summary.length > 0,
    // @ts-expect-error no event of the Machine has a `bogus` field
    bogus: ({ event }) => event.bogus === 1,
  },
});

review.createMachine({
  initial: "r",
  states: {
    // @ts-expect-error an event key that is no declared event (createMachine throws on it too)
    r: { on: { aprove: "done" } },
    done: { type: "final" },
  },
});

review.createMachine({
  initial: "r",
  states: {
    // @ts-expect-error a guard name that is not declared
    r: { on: { approve: { guard: "hasComents", target: "done" } } },
    done: { type: "final" },
  },
});

review.createMachine({
  initial: "r",
  states: {
    // @ts-expect-error a delivered event is raised without its payload and sender
    r: { entry: raise({ type: "approve" }) },
  },
});

// A def whose name is only a `string` keeps the Machine loosely typed, as before.
const loose = defineEvent({ name: String("dynamic") as string, description: "Built at run time." });
jr2Setup({ events: [loose] }).createMachine({
  initial: "a",
  states: { a: { on: { anything: { guard: ({ event }) => event.whatever === 1, target: "b" } } }, b: {} },
});
