/**
 * The byte-exact conversation history part of the store port (issue 27, ADR-0176): per run
 * and iid, the `history` parts the Harness streamed (each Submission's messages as exact JSON
 * text with the running sha256), in arrival order — what the Orchestrator pushes back on a
 * `kept` admission its Harness answered 404 for. Kept only while the run lives: a part for a
 * settled run (`done`, `faulted`, `cancelled`) is not stored, a save of a settled blob deletes
 * the run's parts (in its transaction; PostgreSQL's just after its commit, aside from the run's
 * writes), and retention deletes any left. Best effort (ADR-0176): losing a write costs only the
 * fallback, so the host never lets a history write hold up or fail a run's. Separate from the
 * transcript (which caps long fields for display). `createMemoryHistories` is the reference.
 * @see SPEC §8
 */
import type { HistorySubmission } from "@jr2/wire";

/** One write of a run's history, applied in order: a part appended, or an iid's parts deleted. */
export type HistoryWrite = { iid: string; part: HistorySubmission } | { iid: string; drop: true };

/** One stored part of a run's history. */
export interface StoredHistoryPart {
  iid: string;
  part: HistorySubmission;
}

/** What {@link RunStore} offers for conversation histories (ADR-0176). */
export interface HistoryStore {
  /**
   * Applies `writes` of `runId` in order, in one transaction: a part is inserted once by (iid,
   * sha256) — one stored already (a stream read again) is ignored — and only while the run is
   * not settled; a drop deletes the iid's parts (a fresh conversation whose Turn ended).
   */
  writeHistory(runId: string, writes: readonly HistoryWrite[]): Promise<void>;
  /** The stored parts of `runId`, in arrival order (restore reloads them); `[]` when none. */
  histories(runId: string): Promise<StoredHistoryPart[]>;
}

/**
 * The memory store's histories: same semantics; `settled(runId)` answers whether the stored
 * run is settled (a part for it is not kept); `dropRun` is the settled save's and retention's.
 */
export function createMemoryHistories(
  settled: (runId: string) => boolean,
): HistoryStore & { dropRun(runId: string): number } {
  const byRun = new Map<string, StoredHistoryPart[]>();
  return {
    async writeHistory(runId, writes) {
      let parts = byRun.get(runId) ?? [];
      for (const w of writes) {
        if ("drop" in w) parts = parts.filter((p) => p.iid !== w.iid);
        else if (!settled(runId) && !parts.some((p) => p.iid === w.iid && p.part.sha256 === w.part.sha256))
          parts.push(structuredClone({ iid: w.iid, part: w.part }));
      }
      if (parts.length > 0) byRun.set(runId, parts);
      else byRun.delete(runId);
    },
    histories: async (runId) => structuredClone(byRun.get(runId) ?? []),
    dropRun(runId) {
      const n = byRun.get(runId)?.length ?? 0;
      byRun.delete(runId);
      return n;
    },
  };
}
