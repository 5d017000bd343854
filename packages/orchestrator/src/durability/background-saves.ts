/**
 * Background saves (ADR-0253): the saves no caller awaits — after a cascade of macrosteps, for
 * an effect in the outbox. Never rejecting: a failed one is retried with backoff (the whole blob
 * again) and logged at most once per `logEveryMs` per run; a frozen run is saved no more.
 * @see SPEC §8
 */
import { backoffMs } from "./save-context.js";
import type { SavedRun } from "./saved-run.js";
import { enqueueSave, type Saves } from "./saves.js";

/** A run's failing background saves: how many in a row, the retry's timer, when last logged. */
export interface RetryState {
  failures: number;
  timer?: NodeJS.Timeout;
  loggedAt?: number;
}

/** The background saves' own state: runs with a save queued, runs whose save is retrying. */
export interface BackgroundSaves {
  /** Runs whose save is queued for the end of the current cascade (a microtask). */
  readonly queued: Set<SavedRun>;
  readonly retries: Map<SavedRun, RetryState>;
}

/** None queued, none retrying. */
export function createBackgroundSaves(): BackgroundSaves {
  return { queued: new Set(), retries: new Map() };
}

/**
 * Saves `run` once the current synchronous cascade of macrosteps is over (a microtask): one
 * save for any number of changes in it. Nothing when closed or frozen.
 */
export function saveAfterCascade(saves: Saves, background: BackgroundSaves, run: SavedRun): void {
  if (saves.ctx.closed || run.frozen || background.queued.has(run)) return;
  background.queued.add(run);
  queueMicrotask(() => {
    background.queued.delete(run);
    saveInBackground(saves, background, run);
  });
}

/** Stops `run`'s retry, if one waits. */
export function cancelRetry(background: BackgroundSaves, run: SavedRun): void {
  const state = background.retries.get(run);
  if (state?.timer) clearTimeout(state.timer);
  background.retries.delete(run);
}

/** Stops every retry (shutdown). */
export function cancelAllRetries(background: BackgroundSaves): void {
  for (const state of background.retries.values()) if (state.timer) clearTimeout(state.timer);
  background.retries.clear();
}

/** A background save: never rejects (a failure schedules the retry). */
function saveInBackground(saves: Saves, background: BackgroundSaves, run: SavedRun): void {
  if (saves.ctx.closed || run.frozen) return;
  enqueueSave(saves, run).then(
    () => cancelRetry(background, run),
    (error: unknown) => backgroundFailed(saves, background, run, error),
  );
}

/** A background save of `run` failed: retry with backoff, log at most once per `logEveryMs`. */
function backgroundFailed(saves: Saves, background: BackgroundSaves, run: SavedRun, error: unknown): void {
  const { ctx } = saves;
  if (ctx.closed || run.frozen) return;
  const state = background.retries.get(run) ?? { failures: 0 };
  background.retries.set(run, state);
  const delay = backoffMs(ctx.backoff, state.failures);
  state.failures++;
  const at = ctx.now().getTime();
  if (state.loggedAt === undefined || at - state.loggedAt >= ctx.backoff.logEveryMs) {
    state.loggedAt = at;
    ctx.log.error(
      { runId: run.runId, err: error, failures: state.failures, retryInMs: delay },
      "saving the run failed; retrying with backoff",
    );
  }
  if (state.timer) clearTimeout(state.timer);
  state.timer = setTimeout(() => {
    state.timer = undefined;
    saveInBackground(saves, background, run);
  }, delay);
  state.timer.unref?.();
}
