import { type CallbackActorLogic, type EventObject, fromCallback } from "xstate";
import { markGateLogic } from "../menu/marks.js";
import { gateIdentityOf } from "../menu/menu.js";
import { runBindingOf } from "../xstate/run-binding.js";

/** The input a Gate invoke may carry: `meta` is shown to whoever answers the Gate. */
export interface GateInput {
  meta?: unknown;
}

/** The built-in Gate actor logic type. */
export type GateLogic = CallbackActorLogic<EventObject, GateInput | undefined>;

/**
 * The built-in `gate` actor, provided by jr2Setup as src `"gate"`: a state's wait for an
 * outside party. It tells the run host it opened (`openGate`) with its id — the authored
 * invoke id, or its state path below the run root — and closes when the state exits.
 * @see SPEC §6
 * @example invoke: { src: "gate", id: "merge_gate", input: { meta: { question: "Merge?" } } }
 */
export const gate: GateLogic = fromCallback<EventObject, GateInput | undefined>(({ self, input, system }) => {
  const { id } = gateIdentityOf(self);
  const close = runBindingOf(system)?.openGate({ self, id, meta: input?.meta });
  return () => close?.();
});
markGateLogic(gate);
