/**
 * Turn records that wait for a save (ADR-0296 "Registration first"): a record of a Turn whose
 * registration is not committed yet, or one reporting a Turn's end (its state's exit), is
 * written in the transaction of the run's next save of its current state — never a record of a
 * Turn the committed run does not hold (a pick's cascade registers the next Turn; if that save
 * never commits, the restart mints another turnId). Every other record (a pick told after its
 * commit, a fault, a reseat) of a committed Turn is written on its own (pending-rows.ts).
 * @see SPEC §8; ADR-0257, ADR-0296
 */
import type { SavedRun } from "./saved-run.js";
import type { TurnRecord } from "./transcript-rows.js";

/** Per run: the newest waiting record of each Turn, by turnId, in the order they first waited. */
export type WaitingTurns = Map<SavedRun, Map<string, TurnRecord>>;

/**
 * Whether `turn`'s record must ride `run`'s next save rather than be written on its own: its
 * registration is not committed, or `ends` (the record reports its state's exit). A run that
 * does not track commits (`committedTurns` absent) writes every record on its own.
 */
export function waitsForSave(run: SavedRun, turn: TurnRecord, ends: boolean): boolean {
  if (!run.committedTurns) return false;
  return ends || !run.committedTurns.has(turn.turnId);
}

/** Keeps `turn` for `run`'s next save (replacing an older record of that Turn). */
export function waitForSave(waiting: WaitingTurns, run: SavedRun, turn: TurnRecord): void {
  const list = waiting.get(run) ?? new Map<string, TurnRecord>();
  list.set(turn.turnId, turn);
  waiting.set(run, list);
}

/** Takes what a save of `run` carries: none when the snapshot is held (that save is not the current state). */
export function takeTurns(waiting: WaitingTurns, run: SavedRun, held: boolean): TurnRecord[] {
  if (held) return [];
  const list = waiting.get(run);
  waiting.delete(run);
  return list ? [...list.values()] : [];
}

/** A save carrying `turns` committed: those Turns' registrations are (their later records go on their own). */
export function turnsCommitted(run: SavedRun, turns: readonly TurnRecord[]): void {
  for (const t of turns) run.committedTurns?.add(t.turnId);
}

/**
 * A save carrying `turns` failed: they wait for the next save, behind any newer record of the
 * same Turn — unless the run froze or was let go (reloaded from its last commit, or another
 * instance's: what they describe is never committed from this memory).
 */
export function returnTurns(waiting: WaitingTurns, run: SavedRun, turns: readonly TurnRecord[]): void {
  if (turns.length === 0 || run.frozen || run.movedAway) return;
  const list = new Map(turns.map((t) => [t.turnId, t]));
  for (const [turnId, t] of waiting.get(run) ?? []) list.set(turnId, t);
  waiting.set(run, list);
}
