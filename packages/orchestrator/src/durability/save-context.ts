/**
 * What the parts of a run host's saves share (ADR-0250, ADR-0253): the store, the log, the
 * clock and the backoff of failed writes, and two facts each part reads — the saves are closed
 * (a shutdown), and the store is failing (a commit failed and none succeeded since).
 * @see SPEC §8
 */
import type { Logger } from "pino";
import { FencedError } from "./store/ownership.js";
import type { RunStore } from "./store/run-store.js";

/** How failed writes back off (ADR-0253), defaults resolved; times in milliseconds. */
export interface Backoff {
  /** First retry delay; doubles per failure. */
  readonly minMs: number;
  /** Largest retry delay. */
  readonly maxMs: number;
  /** A run's failing saves are logged at most once per this long. */
  readonly logEveryMs: number;
}

/** The state every part of the saves shares, passed to each of them (never hidden). */
export interface SaveContext {
  readonly store: RunStore;
  readonly log: Logger;
  readonly now: () => Date;
  readonly backoff: Backoff;
  /** Called once when a commit succeeds after the store failed (frozen runs can be reloaded). */
  readonly onRecovered: (() => void) | undefined;
  /**
   * A write of the run was refused by the fence (FencedError, ADR-0280): the host lets it go.
   * Not a failing store: nothing is retried for that run.
   */
  readonly onFenced: ((runId: string) => void) | undefined;
  /** `close()` was called: background saves are skipped, foreground ones reject. */
  closed: boolean;
  /** The last commit failed (and none succeeded since): its error text. */
  failing: string | undefined;
}

/** The delay before retrying after `failures` failed writes in a row (0-based), in ms. */
export function backoffMs(backoff: Backoff, failures: number): number {
  return Math.min(backoff.maxMs, backoff.minMs * 2 ** failures);
}

/** A write failed: the store is failing, with `error`'s text, until a commit succeeds. */
export function storeFailed(ctx: SaveContext, error: unknown): void {
  ctx.failing = error instanceof Error ? error.message : String(error);
}

/**
 * A commit of `runId` succeeded: a failing store accepts writes again — logged once, and
 * `onRecovered` told (what it throws is logged, never the commit's failure).
 */
export function storeCommitted(ctx: SaveContext, runId: string): void {
  if (ctx.failing === undefined) return;
  ctx.failing = undefined;
  ctx.log.info({ runId }, "the run store accepts writes again");
  try {
    ctx.onRecovered?.();
  } catch (error) {
    ctx.log.error({ err: error }, "reacting to the store's recovery threw");
  }
}

/**
 * Whether `error` is the fence's (ADR-0280): the write was refused because another instance
 * holds the run now. Tells the host (`onFenced`) and returns true; the store is not failing.
 */
export function wasFenced(ctx: SaveContext, error: unknown): boolean {
  if (!(error instanceof FencedError)) return false;
  try {
    ctx.onFenced?.(error.runId);
  } catch (reactError) {
    ctx.log.error({ runId: error.runId, err: reactError }, "letting go of a fenced run threw");
  }
  return true;
}
