/**
 * Run starts that are safe to retry (issue 24 item 6, ADR-0282): an `Idempotency-Key` names one
 * run for 24 h. The key is reserved, with the run id about to be started, before the run starts,
 * so a retry arriving while the first start is still under way (a client that timed out) finds
 * it. One port, three stores: memory here, `sqlite-start-keys.ts`, `postgres-start-keys.ts`.
 */

/** How long a key names its run (ms): 24 h. Older, it is reserved anew. */
export const START_KEY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** What a reservation found: this start's own (`fresh`), or an earlier start's run. */
export interface StartKeyReservation {
  runId: string;
  workflow: string;
  fresh: boolean;
}

/** The start keys of a store. */
export interface StartKeys {
  /**
   * Reserves `key` for `runId` of `workflow` unless an earlier start holds it from less than
   * {@link START_KEY_WINDOW_MS} before `nowMs` (epoch ms): then that start's run is answered.
   */
  reserve(key: string, workflow: string, runId: string, nowMs: number): Promise<StartKeyReservation>;
  /** Drops a reservation whose start failed (only while it still names `runId`). */
  forget(key: string, runId: string): Promise<void>;
}

/** Start keys in memory (the memory store; lost with the process). */
export function createMemoryStartKeys(): StartKeys {
  const rows = new Map<string, { runId: string; workflow: string; at: number }>();
  return {
    async reserve(key, workflow, runId, nowMs) {
      const held = rows.get(key);
      if (held && held.at > nowMs - START_KEY_WINDOW_MS)
        return { runId: held.runId, workflow: held.workflow, fresh: false };
      rows.set(key, { runId, workflow, at: nowMs });
      return { runId, workflow, fresh: true };
    },
    async forget(key, runId) {
      if (rows.get(key)?.runId === runId) rows.delete(key);
    },
  };
}
