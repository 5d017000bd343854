/**
 * The outbox (ADR-0250): effects that leave the process (an admission, a remote abort) wait for
 * the next commit of their run's current state — not of a held snapshot — and run only once it
 * is committed. A failed commit keeps them for the next one; a frozen run's are dropped: a
 * restart finds the run as last committed.
 * @see SPEC §5.4, §8
 */
import type { Logger } from "pino";
import type { SavedRun } from "./saved-run.js";

/** An effect run after a commit; what it throws is logged. */
export type Effect = () => void;

/** Per run: the effects waiting for the next commit of its current state, in order. */
export type Outbox = Map<SavedRun, Effect[]>;

/** Adds `effect` to `run`'s outbox, after those waiting already. */
export function addEffect(outbox: Outbox, run: SavedRun, effect: Effect): void {
  const list = outbox.get(run) ?? [];
  list.push(effect);
  outbox.set(run, list);
}

/**
 * Takes the effects a save of `run` releases once committed: none while its snapshot is held
 * (that save does not commit the current state), else all that wait.
 */
export function takeEffects(outbox: Outbox, run: SavedRun, held: boolean): Effect[] {
  const effects = held ? [] : (outbox.get(run) ?? []);
  if (effects.length > 0) outbox.delete(run);
  return effects;
}

/** A save failed: its `effects` wait for the next commit (before any added since), unless the run froze. */
export function returnEffects(outbox: Outbox, run: SavedRun, effects: readonly Effect[]): void {
  if (effects.length > 0 && !run.frozen) outbox.set(run, [...effects, ...(outbox.get(run) ?? [])]);
}

/** Runs a commit's `effects` in order; one that throws is logged and the rest still run. */
export function releaseEffects(log: Logger, run: SavedRun, effects: readonly Effect[]): void {
  for (const effect of effects) {
    try {
      effect();
    } catch (error) {
      log.error({ runId: run.runId, err: error }, "an effect after a commit threw");
    }
  }
}
