/**
 * Usage records not yet committed (ADR-0255): each model request's usage is written to the
 * store on its own (never by re-saving the blob) and retried with backoff until it is; a run's
 * next save carries its pending records too. Kept across a freeze: they are facts from the
 * Harness, whatever becomes of the run.
 * @see SPEC §8
 */
import { backoffMs, type SaveContext, storeFailed } from "./save-context.js";
import type { UsageRecord } from "./usage-totals.js";

/** The usage records waiting for the store, and the one flush or retry that writes them. */
export interface PendingUsage {
  /** Records not yet committed, by run id. */
  readonly byRun: Map<string, UsageRecord[]>;
  /** A flush is queued for the end of the current cascade (a microtask). */
  flushQueued: boolean;
  /** The backoff timer of a failed write, while one waits. */
  retry: NodeJS.Timeout | undefined;
  /** Failed writes in a row (the backoff's exponent). */
  failures: number;
}

/** No usage pending. */
export function createPendingUsage(): PendingUsage {
  return { byRun: new Map(), flushQueued: false, retry: undefined, failures: 0 };
}

/**
 * Queues `runId`'s `record` and a flush once the current cascade is over (a microtask), unless
 * a flush is queued already or a retry waits (it writes this record too).
 */
export function queueUsage(
  ctx: SaveContext,
  pending: PendingUsage,
  runId: string,
  record: UsageRecord,
): void {
  const list = pending.byRun.get(runId) ?? [];
  list.push(record);
  pending.byRun.set(runId, list);
  if (!pending.flushQueued && !pending.retry) {
    pending.flushQueued = true;
    queueMicrotask(() => flushUsage(ctx, pending));
  }
}

/** Takes `runId`'s pending records for a save to carry (none left pending). */
export function takeUsage(pending: PendingUsage, runId: string): UsageRecord[] {
  const records = pending.byRun.get(runId) ?? [];
  pending.byRun.delete(runId);
  return records;
}

/**
 * A write carrying `records` failed with `error`: they are pending again (before any queued
 * since) and written on their own with backoff.
 */
export function keepUsage(
  ctx: SaveContext,
  pending: PendingUsage,
  runId: string,
  records: readonly UsageRecord[],
  error: unknown,
): void {
  pending.byRun.set(runId, [...records, ...(pending.byRun.get(runId) ?? [])]);
  retryUsageLater(ctx, pending, runId, error);
}

/** Shutdown: stops the retry and writes what is pending now if the store takes it (never rejects). */
export async function writeUsageOnClose(ctx: SaveContext, pending: PendingUsage): Promise<void> {
  if (pending.retry) clearTimeout(pending.retry);
  // Usage read before the stop is a fact: written now if the store takes it.
  for (const [runId, records] of pending.byRun) await ctx.store.recordUsage(runId, records).catch(() => {});
  pending.byRun.clear();
}

/** Writes every pending usage record; a failure keeps them and retries with backoff. */
function flushUsage(ctx: SaveContext, pending: PendingUsage): void {
  pending.flushQueued = false;
  if (ctx.closed) return;
  for (const [runId, records] of [...pending.byRun]) {
    pending.byRun.delete(runId);
    ctx.store.recordUsage(runId, records).then(
      () => {
        pending.failures = 0;
      },
      (error: unknown) => {
        storeFailed(ctx, error);
        keepUsage(ctx, pending, runId, records, error);
      },
    );
  }
}

/** Pending usage could not be written: flush again with backoff (logged on the first failure). */
function retryUsageLater(ctx: SaveContext, pending: PendingUsage, runId: string, error: unknown): void {
  if (pending.retry || ctx.closed) return;
  const delay = backoffMs(ctx.backoff, pending.failures++);
  if (pending.failures === 1)
    ctx.log.error({ runId, err: error }, "recording usage failed; retrying with backoff");
  pending.retry = setTimeout(() => {
    pending.retry = undefined;
    flushUsage(ctx, pending);
  }, delay);
  pending.retry.unref?.();
}
