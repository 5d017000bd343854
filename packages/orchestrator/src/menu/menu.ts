/**
 * The Menu and the other facts the walk fixed for a Machine, looked up by Machine or by a
 * live actor. Computed once at createMachine (menu-walk.ts); these readers never recompute.
 * @see SPEC §3.3, §6
 */
import type { Tool } from "@jr2/wire";
import type { AnyActorRef, AnyStateMachine } from "xstate";
import type { TurnInput } from "../xstate/run-binding.js";
import { type InvokingState, type MachineInfo, type MachineModel, modelOf } from "./machine-model.js";

export type { InvokingState, MachineInfo, MachineModel, MachineWarning } from "./machine-model.js";
export { modelOf, registerModel } from "./machine-model.js";

import { actorPathOf, logicOf, parentOf } from "../xstate/adapter.js";

/**
 * The Menu of Agent `agentName` in `machine`: the union of the derived sets of every state
 * invoking it, sorted by name in UTF-16 code-unit order, each `{ name, description,
 * parameters }`. The same frozen array (so the same bytes) on every call; `[]` when the
 * Machine has no Agent of that name or is not a jr2 Machine.
 * @see SPEC §3.3
 * @example JSON.stringify(getMenu(machine, "reviewer")) // the tools block, byte-stable
 */
export function getMenu(machine: AnyStateMachine, agentName: string): Tool[] {
  return (modelOf(machine)?.menus.get(agentName) ?? []) as Tool[];
}

/**
 * Everything the walk fixed for a jr2 Machine: its Agents (definition, Menu, derived set per
 * invoking state path), its Gates (`accepts`, keyed by authored id or state path), the
 * Machines it invokes (path `""` is itself), its event defs, load warnings and fingerprint.
 * @throws TypeError when `machine` was not built by `jr2Setup(...).createMachine`
 * @see SPEC §3.2, §3.3, §4.1, §8
 */
export function machineInfoOf(machine: AnyStateMachine): MachineInfo {
  const model = modelOf(machine);
  if (!model) throw new TypeError(`Machine \`${machine.id}\` was not built by jr2Setup(...).createMachine`);
  return model.info;
}

/** The invoking state of a live Turn, found from its Agent slot actor; `undefined` outside a jr2 Machine. */
export interface TurnSeat {
  readonly invoker: AnyActorRef;
  readonly model: MachineModel;
  readonly seat: InvokingState;
  readonly input: TurnInput;
}

/** Finds the Turn's invoking state: the state of the invoker that invoked `turnActor`. */
export function turnSeatOf(turnActor: AnyActorRef): TurnSeat | undefined {
  const invoker = parentOf(turnActor);
  const model = invoker ? modelOf(logicOf(invoker)) : undefined;
  const input = (turnActor.getSnapshot() as { input?: TurnInput }).input;
  if (!invoker || !model || !input) return undefined;
  for (const seat of model.agentStates.values()) {
    if (seat.party.kind === "agent" && seat.party.name === input.agentName) {
      if (seat.node.invoke.some((inv) => inv.id === turnActor.id)) return { invoker, model, seat, input };
    }
  }
  return undefined;
}

/** The Menu a live Turn presents (its Agent's Menu in its invoker's Machine). */
export function menuOfTurn(turnActor: AnyActorRef): Tool[] {
  const found = turnSeatOf(turnActor);
  return found ? ((found.model.menus.get(found.input.agentName) ?? []) as Tool[]) : [];
}

/**
 * A Gate actor's identity: `id` = the authored invoke id, or its state path below the run
 * root (actor path of the invoking Machine + the state path); `path` = the latter always.
 * Deterministic, so recomputed identically on restore.
 * @see SPEC §6
 */
export function gateIdentityOf(gateActor: AnyActorRef): { id: string; path: string; seat?: InvokingState } {
  const invoker = parentOf(gateActor);
  const seat = invoker ? modelOf(logicOf(invoker))?.gateStates.get(gateActor.id) : undefined;
  if (!invoker || !seat) return { id: gateActor.id, path: actorPathOf(gateActor) };
  const base = actorPathOf(invoker);
  const path = base ? `${base}/${seat.statePath}` : seat.statePath;
  const authored = seat.party.kind === "gate" && seat.party.authored;
  return { id: authored ? gateActor.id : path, path, seat };
}
