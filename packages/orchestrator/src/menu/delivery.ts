/**
 * The delivery decision (§4.3 checks 2–6 and `wouldMove`): what to answer a pick, or the
 * exact event to send. Pure — the run host sends, lets the Machine settle, and builds the
 * PickAnswer (`turnComplete` by registration identity, `allowed` read after).
 * @see SPEC §4.3
 */
import type { PickIssue, PickRefusal } from "@jr2/wire";
import type { AnyActorRef, AnyMachineSnapshot, EventObject } from "xstate";
import type { z } from "zod";
import { readSelection } from "./allowed-picks.js";
import { argumentsSchemaOf } from "./event-def.js";
import { turnSeatOf } from "./menu.js";
import { isAtRest } from "./rest.js";
import { type Sender, stampSender } from "./sender.js";

/** The decision for one pick. `deliver` carries the stamped event and its invoker. */
export type PickDecision =
  | { action: "answer"; delivered: false; moved?: boolean; refusal?: PickRefusal; issues?: PickIssue[] }
  | { action: "deliver"; event: EventObject; moved: boolean; target: AnyActorRef };

/** zod issues, reduced to what a model can act on. */
export function toPickIssues(error: z.ZodError): PickIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.filter((p): p is string | number => typeof p !== "symbol"),
    message: issue.message,
    code: issue.code,
  }));
}

/**
 * Decides a pick of the Turn whose Agent slot actor is `turnActor`, in §4.3's order:
 * 2. not at Rest → `refusal: "busy"` (before anything else, `finish` included);
 * 3. not on the Menu → `refusal: "off-menu"` (xstate is never asked about it);
 * 4. outside this state's derived set → `moved: false`, never reaches the Machine;
 * 5. arguments fail the def's schema → `refusal: "invalid-arguments"` with the issues;
 * 6. the real selection holds another party's writing → `moved: false`, not delivered;
 * 7. otherwise deliver, with `moved` = would the real event move something.
 * A guard that throws on the real event is answered `moved: false`, not delivered: delivering
 * it would fail the run on a model's arguments.
 * @param pick `{ name, arguments }` — `arguments` as the model sent them (absent = `{}`)
 * @see SPEC §4.3
 */
export function decidePick(turnActor: AnyActorRef, pick: { name: string; arguments: unknown }): PickDecision {
  if (turnActor.getSnapshot().status !== "active")
    return { action: "answer", delivered: false, refusal: "busy" };
  const found = turnSeatOf(turnActor);
  if (!found) return { action: "answer", delivered: false, refusal: "off-menu" };
  if (!isAtRest(turnActor)) return { action: "answer", delivered: false, refusal: "busy" };
  const { model, seat, input, invoker } = found;
  const def = model.info.events.get(pick.name);
  const onMenu = model.menus.get(input.agentName)?.some((tool) => tool.name === pick.name) ?? false;
  if (!def || !onMenu) return { action: "answer", delivered: false, refusal: "off-menu" };
  if (!seat.names.includes(pick.name)) return { action: "answer", delivered: false, moved: false };
  const parsed = argumentsSchemaOf(def).safeParse(pick.arguments ?? {});
  if (!parsed.success) {
    return {
      action: "answer",
      delivered: false,
      refusal: "invalid-arguments",
      issues: toPickIssues(parsed.error),
    };
  }
  const sender: Sender = { kind: "agent", name: input.agentName, iid: input.iid };
  const event = stampSender(pick.name, parsed.data as Record<string, unknown>, sender);
  const verdict = readSelection(invoker.getSnapshot() as AnyMachineSnapshot, event, seat, model, false);
  if (verdict === "foreign" || verdict === "threw")
    return { action: "answer", delivered: false, moved: false };
  return { action: "deliver", event, moved: verdict === "moves", target: invoker };
}
