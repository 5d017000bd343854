import type { NextSubmission } from "./admission.js";
import type { TurnFault } from "./fault-causes.js";
import { endTurn, isOver, modelOf, type TurnState, until } from "./turn-state.js";

/**
 * After a Submission failed with cause `unparsable-output` (issue 25 §13): the model server
 * (llama-server's peg-format error) could not read the model's output as a tool call. It is the
 * model's output, not the transport — a byte-identical retry regenerates a whole answer that
 * likely fails alike — so the Turn is nudged **once** with the `unparsable-output` notice
 * (menu.ts's words); a second time, or with no nudge left, the Turn ends `no-signal` with cause
 * `unparsable-output`, the Harness's message (the server's words) in the detail. A warn line
 * each time.
 * @param budget nudges left in the Turn
 */
export async function afterUnparsable(
  state: TurnState,
  fault: TurnFault,
  budget: number,
): Promise<{ kind: "nudge"; budget: number; next: NextSubmission } | { kind: "ended" }> {
  const { ports } = state;
  ports.log("warn", "the model server could not read the model's answer as a tool call", {
    model: modelOf(ports),
    iid: state.iid,
    turnId: ports.input.turnId,
    detail: fault.detail,
  });
  if (state.unparsableNudged || budget <= 0) {
    endTurn(state, {
      ...fault,
      detail: `the model server could not read the model's answer as a tool call${state.unparsableNudged ? " again after one nudge" : ""}: ${fault.detail ?? ""}`,
    });
    return { kind: "ended" };
  }
  state.unparsableNudged = true;
  if (ports.allowed().length === 0) await until(state, () => ports.allowed().length > 0);
  if (isOver(state)) return { kind: "ended" };
  return {
    kind: "nudge",
    budget: budget - 1,
    next: { kind: "nudge", kept: true, notices: [{ type: "unparsable-output" }], waitForRest: false },
  };
}
