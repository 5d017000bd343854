/**
 * The fork's rewrite of a saved version (ADR-0270, issue 13's rules): a fork gets identities
 * of its own. Every Agent child's persisted input (its {@link TurnInput}) gets an iid minted
 * anew under the fork's runId — a continued conversation at epoch 0 of the new run, a fresh one
 * with new random hex — and a new turnId; every copy of an old iid or turnId in the snapshot
 * or the timers is replaced. The ledger and the epochs start empty, usage at zero, no fault or
 * outcome: every Turn live at the version is admitted afresh on a new conversation with its
 * task. Timers keep their remaining delay as of the version (overdue ones fire at once). Pure
 * but for the random minting passed in.
 * @see SPEC §5.3, §5.4, §8
 */
import type { BlobWithOwedAborts } from "../durability/owed-aborts.js";
import type { RunBlob, SavedTimer } from "../durability/store/run-store.js";
import { sumUsage } from "../durability/usage-totals.js";
import type { TurnInput } from "../xstate/run-binding.js";

/** What a fork mints: random hex for a fresh conversation's iid, a turnId. */
export interface ForkMints {
  hex(): string;
  turnId(): string;
}

/** The version a fork starts from, and the fork's id and start time. */
export interface ForkOf {
  blob: RunBlob;
  /** When the version was saved, epoch ms (its timers' remaining delay is counted from it). */
  savedAtMs: number;
  newRunId: string;
  nowMs: number;
}

/**
 * The fork's first blob: `of.blob` rewritten under `of.newRunId` (status `running`).
 * @returns the blob and how many Agent children were given new identities
 */
export function forkBlob(of: ForkOf, mints: ForkMints): { blob: RunBlob; turns: number } {
  const { blob, newRunId } = of;
  const renames = new Map<string, string>();
  let turns = 0;
  collectTurnInputs(blob.snapshot, (input) => {
    turns++;
    renames.set(input.iid, forkIid(input, blob.runId, newRunId, mints));
    if (input.turnId !== null) renames.set(input.turnId, mints.turnId());
  });
  const now = new Date(of.nowMs).toISOString();
  // The source's owed aborts are the source's (its iids): a fork owes nobody (ADR-0280).
  const { fault: _fault, outcome: _outcome, faults: _faults, ...all } = blob as BlobWithOwedAborts;
  const { owedAborts: _owed, ...kept } = all;
  return {
    blob: {
      ...kept,
      runId: newRunId,
      status: "running",
      snapshot: replaceStrings(blob.snapshot, renames),
      ledger: {},
      epochs: {},
      timers: blob.timers.map((t) => forkTimer(t, of, renames)),
      usage: sumUsage([]),
      createdAt: now,
      updatedAt: now,
    },
    turns,
  };
}

/**
 * The fork's iid of an Agent child: `<newRunId>/<actor path>/<agent>` for a continued
 * conversation (epoch 0), `<newRunId>/<actor path>/<agent>/<new hex>` for a fresh one.
 */
export function forkIid(input: TurnInput, oldRunId: string, newRunId: string, mints: ForkMints): string {
  const rest = input.iid.startsWith(`${oldRunId}/`) ? input.iid.slice(oldRunId.length + 1) : input.iid;
  const segments = rest.split("/");
  // The address ends with the Agent's name; an epoch or a fresh conversation's hex follows it.
  if (segments.at(-1) !== input.agentName) segments.pop();
  if (!input.continuation) segments.push(mints.hex());
  return [newRunId, ...segments].join("/");
}

/** A saved timer as of the fork: due its remaining delay after now (at once when overdue). */
function forkTimer(timer: SavedTimer, of: ForkOf, renames: ReadonlyMap<string, string>): SavedTimer {
  const remaining = Math.max(0, timer.dueAt - of.savedAtMs);
  return {
    ...timer,
    event: replaceStrings(timer.event, renames),
    startedAt: of.nowMs - Math.max(0, timer.delay - remaining),
    dueAt: of.nowMs + remaining,
  };
}

/** Calls `found` with every persisted Agent input (an object with `agentName`, `iid`, `turnId`) in `value`. */
function collectTurnInputs(value: unknown, found: (input: TurnInput) => void): void {
  if (Array.isArray(value)) {
    for (const v of value) collectTurnInputs(v, found);
    return;
  }
  if (typeof value !== "object" || value === null) return;
  const o = value as Record<string, unknown>;
  if (
    typeof o.agentName === "string" &&
    typeof o.iid === "string" &&
    (typeof o.turnId === "string" || o.turnId === null)
  )
    found(o as unknown as TurnInput);
  for (const v of Object.values(o)) collectTurnInputs(v, found);
}

/** A deep copy of `value` with every string that `renames` names replaced (keys too). */
/** `value` with every string (and key) `renames` names replaced, deeply. Pure. */
export function replaceStrings(value: unknown, renames: ReadonlyMap<string, string>): unknown {
  if (typeof value === "string") return renames.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => replaceStrings(v, renames));
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [renames.get(k) ?? k, replaceStrings(v, renames)]),
  );
}
