/**
 * Rows written to the store on their own (ADR-0255, ADR-0256, ADR-0257): facts that report no
 * state change — usage rows, feed events that are facts, transcript entries, Turn records of
 * committed Turns (the others wait for a save: turn-writes.ts) —
 * are inserted per run, batched per cascade (a microtask), retried with backoff until the
 * store takes them; a run's next save carries its pending rows too; a shutdown writes what is
 * pending if the store takes it. Never by re-saving the RunBlob.
 * @see SPEC §8
 */
import { backoffMs, type SaveContext, storeFailed, wasFenced } from "./save-context.js";
import { FencedError } from "./store/ownership.js";

/** One kind of pending rows: queued per run id, written by the `write` it was made with. */
export interface PendingRows<T> {
  /** Queues `rows` of `runId` and a flush at the end of the current cascade (unless one waits). */
  queue(runId: string, rows: readonly T[]): void;
  /** Takes `runId`'s pending rows for a save to carry (none left pending). */
  take(runId: string): T[];
  /**
   * A write carrying `rows` failed with `error`: they are pending again (before any queued
   * since) and written on their own with backoff.
   */
  keep(runId: string, rows: readonly T[], error: unknown): void;
  /** Drops `runId`'s pending rows unwritten (a run let go, ADR-0280). */
  drop(runId: string): void;
  /** Shutdown: stops the retry and writes what is pending if the store takes it (never rejects). */
  writeOnClose(): Promise<void>;
}

/**
 * Pending rows over `write` (one store call per run and batch). `what` names them in the log
 * line of a first failure ("recording <what> failed; retrying with backoff"). `aside` rows
 * (the byte-exact histories, ADR-0176) touch nothing of the run's: their failure never marks
 * the store failing, and a fenced write of them is dropped without letting the run go (its
 * new owner stores its own); the log line is a warning.
 */
export function pendingRows<T>(
  ctx: SaveContext,
  write: (runId: string, rows: readonly T[]) => Promise<void>,
  what: string,
  { aside = false }: { aside?: boolean } = {},
): PendingRows<T> {
  const byRun = new Map<string, T[]>();
  // Bumped by `drop` (a run let go): a write of the earlier incarnation that fails after that is
  // not kept — written later, under a lease this process took again, its events would take the
  // seqs of the new incarnation's (ON CONFLICT DO NOTHING: one of the two lost; ADR-0284).
  const generation = new Map<string, number>();
  let flushQueued = false;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;

  const keep = (runId: string, rows: readonly T[], error: unknown) => {
    byRun.set(runId, [...rows, ...(byRun.get(runId) ?? [])]);
    retryLater(runId, error);
  };

  /** Writes every run's pending rows, one call per run; a failure keeps them and retries. */
  const flush = () => {
    flushQueued = false;
    if (ctx.closed) return;
    for (const [runId, rows] of [...byRun]) {
      byRun.delete(runId);
      const sentIn = generation.get(runId) ?? 0;
      write(runId, rows).then(
        () => {
          failures = 0;
        },
        (error: unknown) => {
          if (aside) {
            if (!(error instanceof FencedError)) retryAside(runId, rows, sentIn, error);
            return;
          }
          // Another instance holds the run now (ADR-0280): it reads these again from the Harness.
          if (wasFenced(ctx, error)) return;
          storeFailed(ctx, error);
          if ((generation.get(runId) ?? 0) === sentIn) keep(runId, rows, error);
        },
      );
    }
  };

  /** An aside write failed: kept for a retry unless its run was let go since. */
  const retryAside = (runId: string, rows: readonly T[], sentIn: number, error: unknown) => {
    if ((generation.get(runId) ?? 0) === sentIn) keep(runId, rows, error);
  };

  /** Pending rows could not be written: flush again with backoff (logged on the first failure). */
  const retryLater = (runId: string, error: unknown) => {
    if (retry || ctx.closed) return;
    const delay = backoffMs(ctx.backoff, failures++);
    if (failures === 1)
      ctx.log[aside ? "warn" : "error"](
        { runId, err: error },
        `recording ${what} failed; retrying with backoff`,
      );
    retry = setTimeout(() => {
      retry = undefined;
      flush();
    }, delay);
    retry.unref?.();
  };

  return {
    queue(runId, rows) {
      if (rows.length === 0) return;
      const list = byRun.get(runId) ?? [];
      list.push(...rows);
      byRun.set(runId, list);
      if (!flushQueued && !retry && !ctx.closed) {
        flushQueued = true;
        // A microtask: a stream event and its row are written in the same turn (ADR-0255).
        queueMicrotask(flush);
      }
    },
    take(runId) {
      const rows = byRun.get(runId) ?? [];
      byRun.delete(runId);
      return rows;
    },
    keep,
    drop(runId) {
      byRun.delete(runId);
      generation.set(runId, (generation.get(runId) ?? 0) + 1);
    },
    async writeOnClose() {
      if (retry) clearTimeout(retry);
      for (const [runId, rows] of byRun) await write(runId, rows).catch(() => {});
      byRun.clear();
    },
  };
}
