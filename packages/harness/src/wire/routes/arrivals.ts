/**
 * The Submissions this Harness process admitted, by the Orchestrator's client-chosen id
 * (issue 24 item 5, ADR-0288): what `GET /conversations/:iid/submissions/:clientSubmissionId`
 * answers, and what a repeated admission with the same id is answered with (its first
 * admission, nothing admitted twice). In memory and per process: the answer carries this
 * process's bootId, and an Orchestrator trusts "not arrived" only from the process it sent the
 * admission to — a restarted Harness is judged by ADR-0037's "provably lost" instead.
 */
import type { Admission } from "@jr2/wire";

/** How many ids are kept; the oldest goes first. An id is asked about within seconds of its send. */
export const ARRIVALS_KEPT = 10_000;

/** The registry of one Harness process. */
export interface Arrivals {
  /** The admission given to `(iid, id)`, if this process admitted it. */
  get(iid: string, id: string): Admission | undefined;
  /** Records an admission; forgets the oldest past {@link ARRIVALS_KEPT}. */
  put(iid: string, id: string, admission: Admission): void;
}

/** A fresh registry (a Map kept in insertion order, so the oldest key is first). */
export function createArrivals(kept = ARRIVALS_KEPT): Arrivals {
  const byKey = new Map<string, Admission>();
  const key = (iid: string, id: string) => `${iid}\u0000${id}`;
  return {
    get: (iid, id) => byKey.get(key(iid, id)),
    put(iid, id, admission) {
      byKey.set(key(iid, id), admission);
      while (byKey.size > kept) {
        const oldest = byKey.keys().next().value;
        if (oldest === undefined) break;
        byKey.delete(oldest);
      }
    },
  };
}
