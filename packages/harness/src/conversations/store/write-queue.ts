/**
 * The store's write queue (ADR-0177): writes are queued and committed together, one transaction
 * per flush. A commit that fails (SQLITE_FULL on a full disk, SQLITE_IOERR) keeps every queued
 * write — nothing is dropped — and the queue is retried with backoff until a commit succeeds;
 * meanwhile the store is "failing" (`failing()` says why since when), which the Harness turns
 * into 503 `JR2_ERR_HARNESS_STORE_FAILING` on new admissions and a `store` field on /healthz.
 * @see docs/adr/0177-harness-store-failing.md
 */

/** Why the store refuses writes, and since when (ms since epoch). */
export interface StoreFailure {
  detail: string;
  since: number;
}

/** What the queue reports: the first failure of a spell, and the commit that ended it. */
export interface WriteQueueEvents {
  onFailing?(failure: StoreFailure): void;
  onRecovered?(failure: StoreFailure): void;
}

/** Backoff between retries of a failed commit, ms: doubled from the first to the cap. */
export const STORE_RETRY_FIRST_MS = 250;
export const STORE_RETRY_CAP_MS = 10_000;

export interface WriteQueue {
  enqueue(op: () => void): void;
  /**
   * Commits every queued write now. On failure the writes stay queued (a retry is scheduled)
   * and the error is thrown, so a caller about to answer something durable does not.
   */
  flush(): void;
  failing(): StoreFailure | undefined;
  /** Stops retrying (the file is closing); queued writes stay unwritten. */
  stop(): void;
}

/**
 * A write queue committing through `commit` (one transaction over the ops, in order); `isOpen`
 * false stops the background flush (the file was closed).
 */
export function createWriteQueue(
  commit: (ops: Array<() => void>) => void,
  isOpen: () => boolean,
  events: WriteQueueEvents = {},
): WriteQueue {
  let queued: Array<() => void> = [];
  let scheduled = false;
  let failure: StoreFailure | undefined;
  let retry: NodeJS.Timeout | undefined;
  let backoffMs = STORE_RETRY_FIRST_MS;

  const flush = () => {
    if (queued.length === 0) return;
    const ops = queued;
    try {
      // The ops are replays of INSERT OR IGNORE / REPLACE and trims: safe to run again after a rollback.
      commit(ops);
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      if (!failure) {
        failure = { detail, since: Date.now() };
        events.onFailing?.(failure);
      } else failure.detail = detail;
      scheduleRetry();
      throw err;
    }
    // Only what was committed leaves the queue; an op a commit queued itself stays.
    queued = queued.slice(ops.length);
    if (failure) {
      const ended = failure;
      failure = undefined;
      backoffMs = STORE_RETRY_FIRST_MS;
      events.onRecovered?.(ended);
    }
  };
  const background = () => {
    if (!isOpen()) return;
    try {
      flush();
    } catch {
      // Reported once through onFailing; retried with backoff (the process stays up).
    }
  };
  const scheduleRetry = () => {
    if (retry) return;
    const wait = backoffMs;
    backoffMs = Math.min(backoffMs * 2, STORE_RETRY_CAP_MS);
    retry = setTimeout(() => {
      retry = undefined;
      background();
    }, wait);
    retry.unref();
  };
  return {
    enqueue(op) {
      queued.push(op);
      if (scheduled || failure) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        background();
      });
    },
    flush,
    failing: () => (failure ? { ...failure } : undefined),
    stop() {
      if (retry) clearTimeout(retry);
      retry = undefined;
    },
  };
}
