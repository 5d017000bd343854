/**
 * A Submission's waits for its endpoint's KV working set, in all (issue 30 §2: `jr2 show` says
 * how long each Turn waited) — the settlement's `kvWaitMs`. Kept on the Submission's record, not
 * only inside its run: an abort settles the Submission at once (conversations.ts), while the
 * aborted wait is still under way, and that settlement must carry the wait too (ADR-0432).
 */
export interface KvWaitTally {
  /** Waits that ended, ms. */
  ms: number;
  /** Whether any request of the Submission waited (streamed `queued`). */
  queued: boolean;
  /** When the wait under way began (epoch ms); none while no request waits. */
  since?: number | undefined;
}

/** An empty tally. */
export function newKvWaitTally(): KvWaitTally {
  return { ms: 0, queued: false };
}

/** A request of the Submission begins to wait (its `queued` event). */
export function waitBegan(t: KvWaitTally, now = Date.now()): void {
  t.queued = true;
  t.since = now;
}

/** The wait under way ended after `ms` (entered or aborted). */
export function waitEnded(t: KvWaitTally, ms: number): void {
  t.ms += ms;
  t.queued = true;
  t.since = undefined;
}

/**
 * The settlement's `kvWaitMs` field: present once any request waited (0 ms included), with a
 * wait still under way counted up to `now` (an abort settles before the wait's own end is told).
 */
export function kvWaitField(t: KvWaitTally, now = Date.now()): { kvWaitMs?: number } {
  if (!t.queued) return {};
  return { kvWaitMs: Math.max(0, Math.round(t.ms + (t.since === undefined ? 0 : now - t.since))) };
}
