/**
 * Restating the Turn part at a step boundary (§7.5), engine-neutral: what the model last read,
 * what a surface read says now, and whether one restatement is due. Only the placement (pi's
 * `steer`) lives in the engine.
 * @see SPEC §7.5; seed ADR-0029
 */

/**
 * The last Allowed-picks list the model read: the Turn part's, then every receipt's, then every
 * restatement's. `unknown` after a receipt that could not say (an older Orchestrator without
 * `allowed`, or a pick lost in transit).
 */
export type LastRead = { kind: "known"; allowed: readonly string[] } | { kind: "unknown"; ownPick: boolean };

/** Where the Turn stands at a step boundary, as far as the Harness knows it. */
export interface BoundaryState {
  lastRead: LastRead;
  /** A pick's answer said the Turn is over (`turnComplete`, or a 404 on a pick). */
  turnOver: boolean;
  /** The Submission was aborted (or stopped for runaway). */
  stopped: boolean;
  /** The model's answer carried no tool call: it stopped. */
  modelStopped: boolean;
}

/** The result of one bounded surface read: a failure (or 404) is silence (§7.5). */
export type SurfaceRead = { kind: "read"; allowed: readonly string[] } | { kind: "failed" };

/** What to do at this boundary. `adopt` updates the last-read list without saying anything. */
export type BoundaryDecision =
  | { kind: "skip-read" }
  | { kind: "silent" }
  | { kind: "adopt"; allowed: readonly string[] }
  | { kind: "restate"; allowed: readonly string[] };

/** Two Allowed-picks lists compared as sets (order and duplicates do not count). */
export function sameAllowed(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  if (sa.size !== sb.size) return false;
  for (const name of sa) if (!sb.has(name)) return false;
  return true;
}

/** Whether the boundary may read the surface at all: never after the Turn ended or an abort. */
export function mayRead(state: BoundaryState): boolean {
  return !state.turnOver && !state.stopped;
}

/**
 * Decides the boundary (§7.5): never after the Turn ended or an abort; a failed read is
 * silence; never the Agent's own pick (an unknown last-read caused by an own pick without
 * `allowed` is adopted silently); never an empty list to a model that stopped; otherwise restate
 * when the sets differ.
 */
export function decideBoundary(state: BoundaryState, read: SurfaceRead | undefined): BoundaryDecision {
  if (!mayRead(state) || read === undefined) return { kind: "skip-read" };
  if (read.kind === "failed") return { kind: "silent" };
  const last = state.lastRead;
  if (last.kind === "unknown" && last.ownPick) return { kind: "adopt", allowed: read.allowed };
  if (last.kind === "known" && sameAllowed(last.allowed, read.allowed)) return { kind: "silent" };
  if (state.modelStopped && read.allowed.length === 0) return { kind: "silent" };
  return { kind: "restate", allowed: read.allowed };
}
