/**
 * Gates' readings (§6): what a Gate accepts, what the run would take from it now (the same
 * payload-blind reading as the Allowed picks, asked as the Gate's sender), and the decision
 * for one send. Pure; the run host answers and sends.
 * @see SPEC §6
 */
import type { ErrorCode, Tool } from "@jr2/wire";
import type { AnyActorRef, AnyMachineSnapshot, EventObject } from "xstate";
import { logicOf, parentOf } from "../xstate/adapter.js";
import { readSelection, takesNow } from "./allowed-picks.js";
import { argumentsSchemaOf } from "./event-def.js";
import { gateIdentityOf, modelOf } from "./menu.js";
import { type Sender, stampSender } from "./sender.js";
import { parseStrict } from "./strict-keys.js";

/** One open Gate as `GET /runs/:id` lists it. */
export interface GateReading {
  id: string;
  path: string;
  accepts: Tool[];
  acceptsNow: string[];
  meta: unknown;
}

/** The decision for one Gate send. */
export type GateDecision =
  | { action: "refuse"; code: ErrorCode; fields: Record<string, unknown> }
  | { action: "deliver"; event: EventObject; target: AnyActorRef };

function contextOf(gateActor: AnyActorRef) {
  const { id, path, seat } = gateIdentityOf(gateActor);
  const invoker = parentOf(gateActor);
  const model = invoker ? modelOf(logicOf(invoker)) : undefined;
  return { id, path, seat, invoker, model };
}

/**
 * Reads an open Gate: `accepts` (every name it may ever send, with its schema, Menu order)
 * and `acceptsNow` (those the run would take from it now).
 * @see SPEC §6
 */
export function readGate(gateActor: AnyActorRef): GateReading {
  const { id, path, seat, invoker, model } = contextOf(gateActor);
  const meta = (gateActor.getSnapshot() as { input?: { meta?: unknown } }).input?.meta;
  if (!seat || !invoker || !model) return { id, path, accepts: [], acceptsNow: [], meta };
  const accepts = seat.names.map((name) => {
    const def = model.info.events.get(name)!;
    return { name, description: def.description, parameters: def.parameters };
  });
  const snapshot = invoker.getSnapshot() as AnyMachineSnapshot;
  const sender: Sender = { kind: "gate", id };
  const live = snapshot.status === "active" && gateActor.getSnapshot().status === "active";
  const acceptsNow = live ? seat.names.filter((name) => takesNow(snapshot, name, sender, seat, model)) : [];
  return { id, path, accepts, acceptsNow, meta };
}

/**
 * Why a Gate send would not move, in words, for the 409's message: `acceptsNow` is read without
 * a payload, so a type it lists was refused by its guard on these very fields — saying only
 * "not now" while listing it would read as a contradiction.
 */
export function notNowWhy(type: string, acceptsNow: readonly string[]): string {
  return acceptsNow.includes(type)
    ? ` with this payload: its guard refused these fields (accepted now reads each event without a payload); send other values`
    : "";
}

/**
 * Decides a send to a Gate: 400 `JR2_ERR_GATE_EVENT_NOT_ACCEPTED` (type not in `accepts`),
 * 400 `JR2_ERR_GATE_PAYLOAD_INVALID` (with `issues`; an unknown key too), 409 `JR2_ERR_GATE_NOT_NOW` (with
 * `acceptsNow`) when the real selection would not move, or would run another party's
 * writing; otherwise the stamped event and its target.
 * @param body `{ type, ...payload }`
 * @see SPEC §6
 */
export function decideGateEvent(
  gateActor: AnyActorRef,
  body: { type: string } & Record<string, unknown>,
): GateDecision {
  const { id, seat, invoker, model } = contextOf(gateActor);
  const type = String(body.type);
  const def = model?.info.events.get(type);
  if (!seat || !invoker || !model || !def || !seat.names.includes(type)) {
    return {
      action: "refuse",
      code: "JR2_ERR_GATE_EVENT_NOT_ACCEPTED",
      fields: { gateId: id, type, accepts: [...(seat?.names ?? [])] },
    };
  }
  const { type: _type, sender: _sender, ...payload } = body;
  // Strict: a person's typo (`reasn`) must not pass as an empty payload.
  const parsed = parseStrict(argumentsSchemaOf(def), payload);
  if (!parsed.ok) {
    return {
      action: "refuse",
      code: "JR2_ERR_GATE_PAYLOAD_INVALID",
      fields: { type, detail: parsed.issues.map((i) => i.message).join("; "), issues: parsed.issues },
    };
  }
  const event = stampSender(type, parsed.data as Record<string, unknown>, { kind: "gate", id });
  const snapshot = invoker.getSnapshot() as AnyMachineSnapshot;
  const verdict = snapshot.status === "active" ? readSelection(snapshot, event, seat, model, false) : "still";
  if (verdict !== "moves") {
    const { acceptsNow } = readGate(gateActor);
    return {
      action: "refuse",
      code: "JR2_ERR_GATE_NOT_NOW",
      fields: { gateId: id, type, acceptsNow, why: notNowWhy(type, acceptsNow) },
    };
  }
  return { action: "deliver", event, target: invoker };
}
