import type { NextSubmission } from "./admission.js";
import { faultOfSettlement, type TurnFault } from "./fault-causes.js";
import type { Settlement } from "./follow.js";
import { endTurn, isOver, modelOf, type TurnState, until } from "./turn-state.js";
import { afterUnparsable } from "./unparsable-output.js";

/**
 * After a Submission settles while its Turn is open (SPEC §5.6, §5.7): a failed or aborted one
 * ends the Turn; a completed one — the model stopped without a pick — is asked again, the
 * wake (no Allowed picks yet: wait until one opens) and the nudge drawing on one budget.
 */

/** What a settlement means for the Turn, decided from the settlement alone. */
export type SettlementVerdict =
  /** Never nudged: the Turn ends with this fault. */
  | { kind: "fault"; fault: TurnFault }
  /** The model stopped without a pick; `textCall`: it wrote its tool call as text. */
  | { kind: "completed"; textCall: boolean; where?: "reasoning" }
  /**
   * The server could not read the model's output as a tool call (issue 25 §13): nudged once with
   * the `unparsable-output` notice; `fault` ends the Turn when it happens again.
   */
  | { kind: "unparsable"; fault: TurnFault };

/**
 * Judges a settlement: `failed` maps through {@link faultOfSettlement} (context-overflow,
 * bad-request, unknown-model, a spent retry bound, …); `aborted` while the Turn is open is an
 * `infra` fault; `completed` goes to the ask-again rule. Pure.
 */
export function judgeSettlement(settlement: Settlement): SettlementVerdict {
  if (settlement.outcome === "failed") {
    const fault = faultOfSettlement(settlement.error);
    return fault.cause === "unparsable-output" ? { kind: "unparsable", fault } : { kind: "fault", fault };
  }
  if (settlement.outcome === "aborted")
    return {
      kind: "fault",
      fault: { reason: "infra", detail: "the Harness aborted the Submission while the Turn was open" },
    };
  return {
    kind: "completed",
    textCall: settlement.textCall === true,
    ...(settlement.textCall === true && settlement.textCallWhere === "reasoning"
      ? { where: "reasoning" as const }
      : {}),
  };
}

/** The ask-again rule's answer: nudge with what is left of the budget, or the budget is spent. */
export type AskAgain =
  | { kind: "nudge"; budget: number; next: NextSubmission }
  | { kind: "spent"; fault: TurnFault };

/**
 * The ask-again rule (§5.7): with budget left, a nudge on the kept conversation — after a text
 * call with the `text-call` notice (the markup is never parsed or delivered); with none,
 * `no-signal` (cause `text-call` when the last answer was one). Pure.
 * @param budget nudges left; `nudgeBudget` the Turn's whole budget; `model` named in the words
 */
export function askAgain(
  budget: number,
  textCall: boolean,
  nudgeBudget: number,
  model: string,
  where?: "reasoning",
): AskAgain {
  if (budget <= 0)
    return {
      kind: "spent",
      fault: textCall
        ? {
            reason: "no-signal",
            detail: `the model stopped without a pick ${nudgeBudget + 1} times, the last time writing its tool call as text (model \`${model}\`): the model server's tool-call parser may be off`,
            cause: "text-call",
          }
        : { reason: "no-signal", detail: `the model stopped without a pick ${nudgeBudget + 1} times` },
    };
  return {
    kind: "nudge",
    budget: budget - 1,
    next: {
      kind: "nudge",
      kept: true,
      notices: textCall ? [{ type: "text-call", ...(where ? { where } : {}) }] : [],
      waitForRest: false,
    },
  };
}

/** What the Turn does after a settlement: send `next` with `budget` left, or nothing more. */
export type AfterSettlement = { kind: "nudge"; budget: number; next: NextSubmission } | { kind: "ended" };

/**
 * Acts on a settlement of the open Turn: ends it with the verdict's fault, or — a completed
 * Submission — reports a text call, waits for an Allowed pick (the wake), and asks again
 * while `budget` lasts.
 */
export async function afterSettlement(
  state: TurnState,
  settlement: Settlement,
  budget: number,
): Promise<AfterSettlement> {
  const { ports } = state;
  const verdict = judgeSettlement(settlement);
  // The Worktree the Harness committed at settlement (every outcome, ADR-0219) rides the next
  // version: the fault's, or — a completed one — whatever the nudge or the no-signal fault makes.
  if (settlement.commit && !isOver(state)) ports.recordCommits?.(settlement.commit);
  if (verdict.kind === "fault") {
    endTurn(state, verdict.fault);
    return { kind: "ended" };
  }
  if (verdict.kind === "unparsable") return afterUnparsable(state, verdict.fault, budget);
  if (verdict.textCall) reportTextCall(state, verdict.where);
  if (ports.allowed().length === 0) await until(state, () => ports.allowed().length > 0);
  if (isOver(state)) return { kind: "ended" };
  const asked = askAgain(budget, verdict.textCall, ports.config.nudgeBudget, modelOf(ports), verdict.where);
  if (asked.kind === "spent") {
    endTurn(state, asked.fault);
    return { kind: "ended" };
  }
  return asked;
}

/** The Harness reported a tool call written as text (issue 10 §3): feed event and warn log, no model text. */
function reportTextCall(state: TurnState, where?: "reasoning"): void {
  const { ports } = state;
  ports.telemetry({ type: "text-call", ...(where ? { where } : {}) });
  ports.log(
    "warn",
    where === "reasoning"
      ? "the model wrote a tool call as text inside its reasoning instead of calling it; nothing was run (the server's reasoning parser keeps calls written inside <think>)"
      : "the model wrote a tool call as text instead of calling it; is the model server's tool-call parser on?",
    {
      model: modelOf(ports),
      iid: state.iid,
      turnId: ports.input.turnId,
    },
  );
}
