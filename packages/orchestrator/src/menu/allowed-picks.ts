/**
 * The Allowed picks (§3.4): a live Turn's derived set, in Menu order, narrowed to what the
 * live Machine would take from this Agent now — asked payload-blind, as the Agent's sender,
 * with a recording Proxy per guard. Both failures fail open.
 * @see SPEC §3.4, §3.6
 */
import type { AnyActorRef, AnyMachineSnapshot, EventObject } from "xstate";
import {
  movesSomething,
  parentOf,
  payloadBlindEvent,
  type StateNodeLike,
  selectTransitions,
  type TransitionLike,
  withGuardReading,
} from "../xstate/adapter.js";
import type { InvokingState, MachineModel } from "./menu.js";
import { turnSeatOf } from "./menu.js";
import { isAtRest } from "./rest.js";
import type { Sender } from "./sender.js";

/** What xstate's selection holds for one event, judged for one seat (an Agent's or a Gate's state). */
export type SelectionVerdict =
  | "moves" // something selected, it moves, and every selected writing is the seat's
  | "still" // nothing selected, or only targetless-actionless writings (`X: {}`)
  | "foreign" // a selected writing belongs to another party (a sibling Gate, a nested Agent)
  | "threw"; // a guard threw

/**
 * Is `source`'s writing the seat's? Its own state, its ancestors, and its modes (descendants
 * whose nearest invoking state is the seat itself).
 * @see SPEC §3.2 "writing"
 */
export function isSeatsWriting(source: StateNodeLike, seat: StateNodeLike, model: MachineModel): boolean {
  const s = source.path;
  const i = seat.path;
  if (s.length <= i.length) return s.every((k, n) => i[n] === k);
  return i.every((k, n) => s[n] === k) && model.ownerOf.get(source.id) === seat.id;
}

/** Judges a selection for a seat. */
export function judgeSelection(
  transitions: readonly TransitionLike[],
  seat: StateNodeLike,
  model: MachineModel,
): Exclude<SelectionVerdict, "threw"> {
  if (transitions.some((t) => !isSeatsWriting(t.source, seat, model))) return "foreign";
  return movesSomething(transitions) ? "moves" : "still";
}

/**
 * Selection on `snapshot` for `event`. `blind`: the event is the payload-blind Proxy and a
 * guard that read the payload or threw counts as passing.
 */
export function readSelection(
  snapshot: AnyMachineSnapshot,
  event: EventObject,
  seat: InvokingState,
  model: MachineModel,
  blind: boolean,
): SelectionVerdict {
  try {
    const transitions = withGuardReading(blind, () => selectTransitions(snapshot, event));
    return judgeSelection(transitions, seat.node, model);
  } catch {
    return "threw";
  }
}

/**
 * Would the Machine take `name` from `sender` now, before any arguments exist? Payload-blind:
 * a guard that read the payload or threw passes; a guard that returned false without looking
 * is trusted. A selection that throws anyway fails open (allowed).
 * @see SPEC §3.4 step 2
 */
export function takesNow(
  snapshot: AnyMachineSnapshot,
  name: string,
  sender: Sender,
  seat: InvokingState,
  model: MachineModel,
): boolean {
  const verdict = readSelection(snapshot, payloadBlindEvent(name, sender), seat, model, true);
  return verdict === "moves" || verdict === "threw";
}

/** `can()` without a sender, for invokers that are not jr2 Machines; a throw reads as allowed. */
export function mayMove(invoker: AnyActorRef, name: string): boolean {
  try {
    return (invoker.getSnapshot() as AnyMachineSnapshot).can({ type: name });
  } catch {
    return true;
  }
}

/**
 * The Allowed picks now of the Turn whose Agent slot actor is `turnActor`: its derived set in
 * Menu order, kept where the live Machine would take the pick from this Agent. `[]` when the
 * Turn is over or not at Rest. Only names on the Menu are ever asked (xstate memoizes per
 * event type).
 * @returns names, in Menu order
 * @see SPEC §3.4
 */
export function readAllowedPicks(turnActor: AnyActorRef): string[] {
  if (turnActor.getSnapshot().status !== "active") return [];
  const invoker = parentOf(turnActor);
  const found = turnSeatOf(turnActor);
  if (!found) {
    const tools = (turnActor.getSnapshot() as { input?: { tools?: string[] } }).input?.tools ?? [];
    return invoker ? tools.filter((name) => mayMove(invoker, name)) : [...tools];
  }
  if (found.invoker.getSnapshot().status !== "active" || !isAtRest(turnActor)) return [];
  const snapshot = found.invoker.getSnapshot() as AnyMachineSnapshot;
  const sender: Sender = { kind: "agent", name: found.input.agentName, iid: found.input.iid };
  return found.seat.names.filter((name) => takesNow(snapshot, name, sender, found.seat, found.model));
}
