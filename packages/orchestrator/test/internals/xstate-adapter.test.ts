/**
 * Pins the xstate 5.33.3 behaviour jr2's readings rest on (SPEC §13). If an upgrade breaks
 * one of these, the adapter (src/xstate-adapter.ts) is the one place to change.
 */

import { describe, expect, it } from "vitest";
import { createActor, createMachine, fromCallback, setup } from "xstate";
import {
  actorAtPath,
  actorPathOf,
  afterTimerStateId,
  mailboxIsIdle,
  movesSomething,
  parentOf,
  payloadBlindEvent,
  pendingDelayedEvents,
  rearmDelayedEvent,
  selectTransitions,
  withGuardReading,
  wrapTransitionGuard,
} from "../../src/xstate/adapter.js";

describe("xstate 5.33.3 as jr2 reads it", () => {
  it("hands a guard the very object passed to selection (not a copy)", () => {
    const seen: unknown[] = [];
    const m = createMachine({
      on: {
        go: {
          guard: ({ event }) => {
            seen.push(event);
            return false;
          },
          target: ".b",
        },
      },
      initial: "a",
      states: { a: {}, b: {} },
    });
    const snap = createActor(m).start().getSnapshot();
    const event = { type: "go", x: 1 };
    snap.can(event);
    selectTransitions(snap, event);
    expect(seen).toEqual([event, event]);
    expect(seen[0]).toBe(event);
    expect(seen[1]).toBe(event);
  });

  it("never lets `X: {}` move (can() false), and an inert child writing blocks its ancestor's", () => {
    const m = createMachine({
      initial: "a",
      on: { note: ".b" },
      states: { a: { on: { note: {} } }, b: {} },
    });
    const snap = createActor(m).start().getSnapshot();
    expect(snap.can({ type: "note" })).toBe(false);
    const selected = selectTransitions(snap, { type: "note" });
    expect(selected.map((t) => t.source.path)).toEqual([["a"]]);
    expect(movesSomething(selected)).toBe(false);
  });

  it("selects a parallel sibling region's writing beside the state's own", () => {
    const m = createMachine({
      type: "parallel",
      states: { left: { on: { go: { actions: () => {} } } }, right: { on: { go: { actions: () => {} } } } },
    });
    const selected = selectTransitions(createActor(m).start().getSnapshot(), { type: "go" });
    expect(selected.map((t) => t.source.key).sort()).toEqual(["left", "right"]);
  });

  it("throws from can() when a guard throws, and ignores the actor's status", () => {
    const m = createMachine({
      initial: "a",
      states: {
        a: {
          on: {
            boom: {
              guard: () => {
                throw new Error("x");
              },
              target: "b",
            },
            go: "b",
          },
        },
        b: {},
      },
    });
    const actor = createActor(m).start();
    expect(() => actor.getSnapshot().can({ type: "boom" })).toThrow();
    actor.stop();
    expect(actor.getSnapshot().status).toBe("stopped");
    expect(actor.getSnapshot().can({ type: "go" })).toBe(true);
  });

  it("keeps per-transition attribution through and([marker, or([guard, blindPass])])", () => {
    const m = setup({
      guards: { named: ({ event }) => (event as { ok?: boolean }).ok === true },
    }).createMachine({
      initial: "a",
      states: {
        a: {
          on: {
            reads: { guard: wrapTransitionGuard("named", "t1") as never, target: "b" },
            blind: { guard: wrapTransitionGuard(() => false, "t2") as never, target: "b" },
          },
        },
        b: {},
      },
    });
    const snap = createActor(m).start().getSnapshot();
    const reads = withGuardReading(true, () => selectTransitions(snap, payloadBlindEvent("reads", {})));
    expect(reads).toHaveLength(1);
    const blind = withGuardReading(true, () => selectTransitions(snap, payloadBlindEvent("blind", {})));
    expect(blind).toHaveLength(0);
    // Outside a blind reading the wrapper is transparent: the real payload decides.
    expect(selectTransitions(snap, { type: "reads", ok: false } as never)).toHaveLength(0);
    expect(selectTransitions(snap, { type: "reads", ok: true } as never)).toHaveLength(1);
  });

  it("records spread and JSON.stringify of the Proxy as payload reads, but not type/sender", () => {
    const m = createMachine({
      initial: "a",
      states: {
        a: {
          on: {
            spread: {
              guard: wrapTransitionGuard(({ event }: { event: object }) => "x" in { ...event }, "s") as never,
              target: "b",
            },
            sender: {
              guard: wrapTransitionGuard(
                ({ event }: { event: { sender?: { kind: string } } }) => event.sender?.kind === "gate",
                "k",
              ) as never,
              target: "b",
            },
          },
        },
        b: {},
      },
    });
    const snap = createActor(m).start().getSnapshot();
    expect(
      withGuardReading(true, () => selectTransitions(snap, payloadBlindEvent("spread", {}))),
    ).toHaveLength(1);
    expect(
      withGuardReading(true, () => selectTransitions(snap, payloadBlindEvent("sender", { kind: "agent" }))),
    ).toHaveLength(0);
  });

  it("exposes _parent, the mailbox, default invoke ids, and `after` timers in the system's scheduled events", () => {
    const child = fromCallback(() => () => {});
    const m = setup({ actors: { child } }).createMachine({
      id: "root",
      initial: "a",
      states: { a: { invoke: { src: "child" }, after: { 5000: "b" } }, b: {} },
    });
    const actor = createActor(m).start();
    const [kid] = Object.values(actor.getSnapshot().children) as never[];
    expect(parentOf(kid!)).toBe(actor);
    expect(actorPathOf(kid!)).toBe("0.root.a");
    expect(actorPathOf(actor)).toBe("");
    expect(mailboxIsIdle(actor)).toBe(true);
    const timers = pendingDelayedEvents(actor.system);
    expect(timers.map((t) => t.event.type)).toEqual(["xstate.after.5000.root.a"]);
    expect(afterTimerStateId(timers[0]!.event)).toBe("root.a");
    expect(timers[0]!.source).toBe(actor);
    actor.stop();
  });

  it("drops `after` timers from a restored snapshot; re-armed with the same id they fire, and the state's exit still cancels them", async () => {
    const m = setup({}).createMachine({
      id: "root",
      initial: "a",
      states: { a: { after: { 20: "b" }, on: { leave: "c" } }, b: {}, c: {} },
    });
    const first = createActor(m).start();
    const [saved] = pendingDelayedEvents(first.system);
    const snapshot = first.getPersistedSnapshot();
    first.stop();

    const restored = createActor(m, { snapshot }).start();
    expect(pendingDelayedEvents(restored.system)).toEqual([]);
    expect(actorAtPath(restored, "")).toBe(restored);
    rearmDelayedEvent(restored.system, { ...saved!, source: restored, target: restored, delay: 20 });
    await new Promise<void>((resolve) => restored.subscribe((s) => s.value === "b" && resolve()));
    expect(restored.getSnapshot().value).toBe("b");

    const again = createActor(m, { snapshot }).start();
    rearmDelayedEvent(again.system, { ...saved!, source: again, target: again, delay: 20 });
    again.send({ type: "leave" });
    expect(pendingDelayedEvents(again.system)).toEqual([]);
    again.stop();
    restored.stop();
  });
});
