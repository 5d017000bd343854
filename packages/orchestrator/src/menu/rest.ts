/**
 * Rest (§3.5): is the Agent's state idle enough to take a pick? Read after the invoker's
 * mailbox drained: nothing runs below the invoking state (nor anything this Turn's picks
 * started), and no timer scheduled below it (or by this Turn's picks) is pending. The
 * invoking state's own invokes and own `after` timers never count — a deadline must not
 * freeze a Turn into "busy".
 * @see SPEC §3.5
 */
import type { AnyActorRef, AnyMachineSnapshot } from "xstate";
import {
  afterTimerStateId,
  mailboxIsIdle,
  parentOf,
  pendingDelayedEvents,
  type StateNodeLike,
} from "../xstate/adapter.js";
import { type TurnSeat, turnSeatOf } from "./menu.js";

interface TurnBaseline {
  /** Children of the invoker when the Turn started: spawned before it, not by its picks. */
  readonly children: ReadonlySet<string>;
  /** Delayed events pending when the Turn started (by id). */
  readonly timers: ReadonlySet<string>;
}

const baselines = new WeakMap<AnyActorRef, TurnBaseline>();

/** Called by the Agent slot's body as the Turn starts; what exists now is not the Turn's doing. */
export function recordTurnBaseline(turnActor: AnyActorRef): void {
  const invoker = parentOf(turnActor);
  if (!invoker) return;
  const snapshot = invoker.getSnapshot() as AnyMachineSnapshot | undefined;
  baselines.set(turnActor, {
    children: new Set(Object.keys(snapshot?.children ?? {})),
    timers: new Set(pendingDelayedEvents(invoker.system).map((e) => e.id)),
  });
}

const isStrictDescendant = (node: StateNodeLike, of: StateNodeLike) =>
  node.path.length > of.path.length && of.path.every((k, i) => node.path[i] === k);

function findNode(seat: TurnSeat, match: (node: StateNodeLike) => boolean): StateNodeLike | undefined {
  const stack: StateNodeLike[] = [seat.model.info.machines[0]!.machine.root as unknown as StateNodeLike];
  while (stack.length) {
    const node = stack.pop()!;
    if (match(node)) return node;
    stack.push(...Object.values(node.states));
  }
  return undefined;
}

/**
 * Why a Turn is not at Rest, or `null` when it is. Pure reading of the live actors.
 * @returns `"mailbox"` | `"child:<id>"` | `"timer:<id>"` | `"inactive"` | `null`
 */
export function busyReason(turnActor: AnyActorRef): string | null {
  const invoker = parentOf(turnActor);
  if (!invoker) return null;
  if (invoker.getSnapshot().status !== "active") return "inactive";
  if (!mailboxIsIdle(invoker)) return "mailbox";
  const found = turnSeatOf(turnActor);
  if (!found) return null;
  const seat = found.seat.node;
  const baseline = baselines.get(turnActor);
  const snapshot = invoker.getSnapshot() as AnyMachineSnapshot;
  for (const [id, child] of Object.entries(
    (snapshot.children ?? {}) as Record<string, AnyActorRef | undefined>,
  )) {
    if (!child || child === turnActor || child.getSnapshot().status !== "active") continue;
    const node = findNode(found, (n) => n.invoke.some((inv) => inv.id === id));
    if (node ? isStrictDescendant(node, seat) : !baseline?.children.has(id)) return `child:${id}`;
  }
  for (const timer of pendingDelayedEvents(invoker.system)) {
    if (timer.source !== invoker) continue;
    const stateId = afterTimerStateId(timer.event);
    if (stateId !== undefined) {
      const node = findNode(found, (n) => n.id === stateId);
      if (node && isStrictDescendant(node, seat)) return `timer:${timer.id}`;
    } else if (baseline && !baseline.timers.has(timer.id)) {
      return `timer:${timer.id}`;
    }
  }
  return null;
}

/**
 * Is the Turn whose Agent slot actor is `turnActor` at Rest? (No invoker → at Rest.)
 * @see SPEC §3.5
 */
export function isAtRest(turnActor: AnyActorRef): boolean {
  return busyReason(turnActor) === null;
}
