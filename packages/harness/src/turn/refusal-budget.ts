import type { TolerantPickAnswer } from "@jr2/wire";

/**
 * The refusal budget of one Submission (issue 25 §11): a model that keeps picking what is not
 * allowed is stopped by refusals, not by the step budget (256 requests, millions of prompt
 * tokens). Counted: a pick answered `moved: false` outside the Allowed picks, and invented tools.
 * Not counted: `busy` (the wake handles it) and invalid arguments. Guard refusals inside the
 * Allowed picks have their own bound, in a row. Either ends the Submission `runaway` with cause
 * `refusal-loop`, naming the picks tried and the Allowed picks. A model that will recover does so
 * after one refusal (57 of 58 on the home-lab server, seed ADR-0029): eight is generous.
 */

/** Refused picks outside the Allowed picks (and invented tools) that end a Submission, unless the model entry's `refusalBudget` says otherwise. */
export const REFUSAL_BUDGET = 8;
/** Guard refusals inside the Allowed picks, in a row, that end a Submission. */
export const GUARD_REFUSALS_LIMIT = 8;

/** What ends the run when the budget is spent. */
export type RefusalHalt = { type: "runaway"; cause: "refusal-loop"; message: string };

/** One Submission's count. */
export interface RefusalCount {
  /** The model entry's `refusalBudget` (default {@link REFUSAL_BUDGET}). */
  budget: number;
  refused: number;
  guardsInARow: number;
  tried: Set<string>;
}

export const newRefusalCount = (budget = REFUSAL_BUDGET): RefusalCount => ({
  budget,
  refused: 0,
  guardsInARow: 0,
  tried: new Set(),
});

/** Counts a pick's answer; the halt once a bound is reached. */
export function countPick(
  c: RefusalCount,
  name: string,
  a: TolerantPickAnswer,
  allowed: readonly string[] | undefined,
  entry: string,
): RefusalHalt | undefined {
  if (a.moved !== false) {
    c.guardsInARow = 0;
    return undefined;
  }
  if (a.refusal === "busy" || a.refusal === "invalid-arguments") return undefined;
  const outside = a.refusal === "off-menu" || (allowed !== undefined && !allowed.includes(name));
  c.tried.add(name);
  if (outside) c.refused++;
  else c.guardsInARow++;
  return haltIf(c, a.allowed ?? allowed, entry);
}

/** Counts a call of a tool on no tools block (invented); the halt once the budget is spent. */
export function countInvented(
  c: RefusalCount,
  name: string,
  allowed: readonly string[] | undefined,
  entry: string,
): RefusalHalt | undefined {
  c.refused++;
  c.tried.add(name.slice(0, 64));
  return haltIf(c, allowed, entry);
}

function haltIf(
  c: RefusalCount,
  allowed: readonly string[] | undefined,
  entry: string,
): RefusalHalt | undefined {
  const tried = [...c.tried].join(", ");
  const now = allowed === undefined ? "unknown" : allowed.join(", ") || "none";
  if (c.refused >= c.budget)
    return {
      type: "runaway",
      cause: "refusal-loop",
      message: `${c.refused} picks outside the Allowed picks were refused in one Submission (refusalBudget ${c.budget} of model entry \`${entry}\`); tried: ${tried}; Allowed picks: ${now}`,
    };
  if (c.guardsInARow >= GUARD_REFUSALS_LIMIT)
    return {
      type: "runaway",
      cause: "refusal-loop",
      message: `${c.guardsInARow} picks in a row were refused by their guards in one Submission (model entry \`${entry}\`); tried: ${tried}; Allowed picks: ${now}`,
    };
  return undefined;
}
