/**
 * Every xstate 5.33 internal jr2 touches, in one place (SPEC §2): the parent link, the
 * mailbox, the scheduler's pending delayed events, transition selection
 * (`machine.getTransitionData`) and the guard wrapping that makes the payload-blind reading
 * possible. `test/internals/xstate-adapter.test.ts` pins each behaviour relied on here.
 * @see SPEC §13 "xstate 5.33 facts"
 */
import {
  type AnyActorRef,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  and,
  type EventObject,
  or,
} from "xstate";
import type { AnyActorSystem } from "./run-binding.js";

/** A state node as the walk reads it (public-shaped, typed loosely on purpose). */
export interface StateNodeLike {
  readonly id: string;
  readonly key: string;
  readonly path: readonly string[];
  readonly type: "atomic" | "compound" | "parallel" | "final" | "history";
  readonly parent: StateNodeLike | undefined;
  readonly states: Record<string, StateNodeLike>;
  readonly invoke: ReadonlyArray<{ src: unknown; id: string; input?: unknown }>;
  readonly transitions: Map<string, TransitionLike[]>;
  /** The state's `meta` as authored (a final state's `outcome`, a Gate's question). */
  readonly meta?: unknown;
}

/** One selected or declared transition (a writing). */
export interface TransitionLike {
  readonly eventType: string;
  readonly source: StateNodeLike;
  readonly target: readonly StateNodeLike[] | undefined;
  readonly actions: readonly unknown[];
  readonly guard: unknown;
  readonly reenter?: boolean;
}

/** The root state node of a Machine. */
export function rootOf(machine: AnyStateMachine): StateNodeLike {
  return machine.root as unknown as StateNodeLike;
}

/** The actor that invoked or spawned `actor` (`_parent`), or `undefined` for a root. */
export function parentOf(actor: AnyActorRef): AnyActorRef | undefined {
  return (actor as unknown as { _parent?: AnyActorRef })._parent;
}

/**
 * The actor's path below the run root: the ids of every actor from the root's child down to
 * `actor`, joined by `/`; `""` for the root itself. Deterministic (invoke ids come from the
 * config), so it is stable across restore.
 */
export function actorPathOf(actor: AnyActorRef): string {
  const ids: string[] = [];
  let at: AnyActorRef | undefined = actor;
  while (at && parentOf(at)) {
    ids.unshift(at.id);
    at = parentOf(at);
  }
  return ids.join("/");
}

/** True when the actor's mailbox holds no event being or waiting to be processed. */
export function mailboxIsIdle(actor: AnyActorRef): boolean {
  const mailbox = (actor as unknown as { mailbox?: { _current?: unknown } }).mailbox;
  return mailbox?._current == null;
}

/** One pending delayed event (`after`, delayed `sendTo`/`raise`) of an actor system. */
export interface PendingDelayedEvent {
  readonly id: string;
  readonly event: EventObject;
  readonly source: AnyActorRef;
  readonly target: AnyActorRef;
  readonly delay: number;
  /** Clock ms at which it was scheduled. */
  readonly startedAt: number;
}

/** The system's pending delayed events (`system.getSnapshot()._scheduledEvents`). */
export function pendingDelayedEvents(system: AnyActorSystem): PendingDelayedEvent[] {
  const snap = system.getSnapshot() as unknown as { _scheduledEvents?: Record<string, PendingDelayedEvent> };
  return Object.values(snap._scheduledEvents ?? {});
}

/**
 * Re-arms a saved delayed event after a restore (xstate drops them from the persisted
 * snapshot, statelyai/xstate#5331): `system.scheduler.schedule` with the same `id`, so the
 * state's exit still cancels it. Call after `start()`.
 * @see SPEC §13 "Restore"
 */
export function rearmDelayedEvent(
  system: AnyActorSystem,
  timer: { source: AnyActorRef; target: AnyActorRef; event: EventObject; delay: number; id: string },
): void {
  const scheduler = (
    system as unknown as {
      scheduler: {
        schedule(s: AnyActorRef, t: AnyActorRef, e: EventObject, delay: number, id: string): void;
      };
    }
  ).scheduler;
  scheduler.schedule(timer.source, timer.target, timer.event, timer.delay, timer.id);
}

/** The actor at `path` (as {@link actorPathOf} writes it) below `root`, through live children. */
export function actorAtPath(root: AnyActorRef, path: string): AnyActorRef | undefined {
  let at: AnyActorRef | undefined = root;
  for (const id of path === "" ? [] : path.split("/")) {
    const children: Record<string, AnyActorRef> | undefined = (
      at?.getSnapshot() as { children?: Record<string, AnyActorRef> } | undefined
    )?.children;
    at = children?.[id];
    if (!at) return undefined;
  }
  return at;
}

/** The id of the state node whose `after` scheduled this event, or `undefined` for other sends. */
export function afterTimerStateId(event: EventObject): string | undefined {
  const m = /^xstate\.after\.[^.]+\.(.+)$/.exec(event.type);
  return m?.[1];
}

/**
 * xstate's transition selection on a snapshot: the transitions `event` would take, guards
 * evaluated, actions not run. Throws what a guard throws.
 */
export function selectTransitions(snapshot: AnyMachineSnapshot, event: EventObject): TransitionLike[] {
  const machine = snapshot.machine as unknown as {
    getTransitionData(s: AnyMachineSnapshot, e: EventObject): TransitionLike[];
  };
  return machine.getTransitionData(snapshot, event);
}

/** `can()`'s test: some selected transition has a target or actions. `X: {}` never moves. */
export function movesSomething(transitions: readonly TransitionLike[]): boolean {
  return transitions.some((t) => t.target !== undefined || t.actions.length > 0);
}

// ── The guard reading ───────────────────────────────────────────────────────────────────────

interface Reading {
  readonly blind: boolean;
  current: string | null;
  readonly readPayload: Set<string>;
  readonly threw: Set<string>;
}

let reading: Reading | null = null;
const NOT_PAYLOAD = new Set<PropertyKey>(["type", "sender"]);

/**
 * Runs `fn` as one guard reading. In a blind reading a wrapped guard that read the payload
 * (any property but `type` and `sender`) or threw counts as passing; outside a reading (a real
 * delivery) the wrappers are transparent.
 */
export function withGuardReading<T>(blind: boolean, fn: () => T): T {
  const outer = reading;
  reading = { blind, current: null, readPayload: new Set(), threw: new Set() };
  try {
    return fn();
  } finally {
    reading = outer;
  }
}

/**
 * The event a blind reading passes to selection: `{ type, sender }` behind a Proxy that
 * records, for the guard running now, every read of anything else (get, has, ownKeys,
 * property descriptors — spread and JSON.stringify included).
 */
export function payloadBlindEvent(type: string, sender: unknown): EventObject {
  const target = { type, sender } as EventObject;
  const note = (key: PropertyKey): void => {
    if (reading?.current != null && !NOT_PAYLOAD.has(key)) reading.readPayload.add(reading.current);
  };
  return new Proxy(target, {
    get(t, key, receiver) {
      note(key);
      return Reflect.get(t, key, receiver);
    },
    has(t, key) {
      note(key);
      return Reflect.has(t, key);
    },
    ownKeys(t) {
      note("…keys");
      return Reflect.ownKeys(t);
    },
    getOwnPropertyDescriptor(t, key) {
      note(key);
      return Reflect.getOwnPropertyDescriptor(t, key);
    },
  });
}

/**
 * Wraps one transition's guard for per-transition attribution:
 * `and([marker(tid), or([guard, blindPass(tid)])])`. The marker names the transition whose
 * guard runs next; `blindPass` lets a blind reading count a guard that read the payload or
 * threw as passing. Named guards, params and `and/or/not` inside `guard` keep working.
 */
export function wrapTransitionGuard(guard: unknown, tid: string): unknown {
  const marker = () => {
    if (reading) reading.current = tid;
    return true;
  };
  const blindPass = () => {
    const r = reading;
    if (!r) return false;
    r.current = null;
    return r.blind && (r.readPayload.has(tid) || r.threw.has(tid));
  };
  // biome-ignore lint/suspicious/noExplicitAny: xstate's guard types are keyed to setup()'s generics.
  return and([marker, or([guard as any, blindPass])]);
}

/**
 * Wraps a leaf guard function so a throw inside a blind reading is recorded against the
 * running transition and reads as `false` (its transition's `blindPass` then passes it).
 * Outside a blind reading the throw propagates as xstate would have it.
 */
export function wrapLeafGuard<F extends (...args: never[]) => unknown>(fn: F): F {
  const wrapped = (...args: never[]) => {
    try {
      return fn(...args);
    } catch (error) {
      const r = reading;
      if (r?.blind && r.current != null) {
        r.threw.add(r.current);
        return false;
      }
      throw error;
    }
  };
  return wrapped as unknown as F;
}

/** The logic an actor runs (`actor.logic`): for a Machine actor, its Machine. */
export function logicOf(actor: AnyActorRef): unknown {
  return (actor as unknown as { logic?: unknown }).logic;
}

/** A composite guard built by xstate's `and/or/not` carries `check`; a leaf function does not. */
export function isCompositeGuard(guard: unknown): boolean {
  return typeof guard === "function" && "check" in guard;
}
