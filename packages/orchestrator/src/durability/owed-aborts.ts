/**
 * Owed aborts (ADR-0250, ADR-0280): a Turn whose state exited owes its Harness the abort of its
 * Submission, sent once that state is committed (the outbox). Kept only in memory, the abort was
 * lost when the process died after the commit, leaving an unaccounted writer on the Harness.
 * They are persisted in the RunBlob with the state that owes them (`owedAborts`, optional: older
 * blobs load), dropped in memory once the Harness acknowledged one (a later save carries that)
 * or once a new admission on its iid is ledgered (the abort went out before it, in the iid's
 * FIFO), and whoever restores the run — a restart, an adoption — sends them again before the
 * run starts, so before any new admission on those iids.
 * @see SPEC §5.1, §5.3, §8
 */
import type { RunBlob } from "./store/run-store.js";

/** One abort a run owes: the Submission on `iid` at the Harness at `harnessUrl` (its base URL). */
export interface OwedAbort {
  iid: string;
  submissionId: string;
  harnessUrl: string;
}

/** A RunBlob as saves write it: with the aborts it owes, when any (ADR-0280). */
export type BlobWithOwedAborts = RunBlob & { owedAborts?: OwedAbort[] };

/** The aborts `blob` owes; `[]` for a blob without (older ones included). Malformed entries are skipped. */
export function owedAbortsOf(blob: RunBlob): OwedAbort[] {
  const owed = (blob as BlobWithOwedAborts).owedAborts;
  if (!Array.isArray(owed)) return [];
  return owed.filter(
    (o): o is OwedAbort =>
      typeof o?.iid === "string" && typeof o.submissionId === "string" && typeof o.harnessUrl === "string",
  );
}

/**
 * The blob field of `owed` for a save: present only while the run is `running` and owes any
 * (a settled run is never restored, so it owes nobody a re-send; older blobs' bytes unchanged).
 */
export function owedAbortsField(
  status: RunBlob["status"],
  owed: readonly OwedAbort[],
): { owedAborts?: OwedAbort[] } {
  return status === "running" && owed.length > 0 ? { owedAborts: owed.map((o) => ({ ...o })) } : {};
}
