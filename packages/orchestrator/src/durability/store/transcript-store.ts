/**
 * The Turn transcript part of the store port (ADR-0257): transcript rows inserted once by
 * (run, iid, submissionId, position), Turn records written again as they change (the newest
 * write wins), both read per run. Never touches the RunBlob. A server database implements it
 * with the same semantics (issue 15); `createMemoryTranscripts` is the reference.
 * @see SPEC §8
 */
import type { TranscriptRow, TurnRecord } from "../transcript-rows.js";
import { losesPick, transcriptKey } from "../transcript-rows.js";

/** What {@link RunStore} offers for Turn transcripts. */
export interface TranscriptStore {
  /** Inserts `rows` of `runId`, each once by (iid, submissionId, position): a stored one is ignored. */
  recordTranscript(runId: string, rows: readonly TranscriptRow[]): Promise<void>;
  /** The keys (`transcriptKey`) of every stored transcript row of `runId` (restore re-seeds them). */
  transcriptKeys(runId: string): Promise<string[]>;
  /** The rows of Turn `turnId` of `runId`, in recording order. */
  transcript(runId: string, turnId: string): Promise<TranscriptRow[]>;
  /** The `prefix` rows of conversation `iid` of `runId`, in recording order (any Turn's). */
  prefixes(runId: string, iid: string): Promise<TranscriptRow[]>;
  /** Writes Turn records of `runId` by turnId: a later write replaces the record, keeping its place. */
  recordTurns(runId: string, turns: readonly TurnRecord[]): Promise<void>;
  /** The Turn records of `runId`, in the order they started (`startedAt`, then first written). */
  turns(runId: string): Promise<TurnRecord[]>;
}

/** The memory store's transcripts: same semantics, per run, copies in and out. */
export function createMemoryTranscripts(): TranscriptStore & { drop(runId: string): number } {
  const rows = new Map<string, Map<string, TranscriptRow>>();
  const turns = new Map<string, Map<string, TurnRecord>>();
  const of = <V>(map: Map<string, Map<string, V>>, runId: string) => {
    const m = map.get(runId) ?? new Map<string, V>();
    map.set(runId, m);
    return m;
  };
  const all = (runId: string) => [...(rows.get(runId)?.values() ?? [])].map((r) => structuredClone(r));
  return {
    async recordTranscript(runId, list) {
      const m = of(rows, runId);
      for (const r of list) if (!m.has(transcriptKey(r))) m.set(transcriptKey(r), structuredClone(r));
    },
    transcriptKeys: async (runId) => [...(rows.get(runId)?.keys() ?? [])],
    transcript: async (runId, turnId) => all(runId).filter((r) => r.turnId === turnId),
    prefixes: async (runId, iid) => all(runId).filter((r) => r.iid === iid && r.entry.kind === "prefix"),
    async recordTurns(runId, list) {
      const m = of(turns, runId);
      for (const t of list) if (!losesPick(m.get(t.turnId), t)) m.set(t.turnId, structuredClone(t));
    },
    async turns(runId) {
      const list = [...(turns.get(runId)?.values() ?? [])].map((t) => structuredClone(t));
      // A stable sort: equal start times keep the order first written.
      return list.sort((a, b) => (a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : 0));
    },
    drop(runId) {
      const n = (rows.get(runId)?.size ?? 0) + (turns.get(runId)?.size ?? 0);
      rows.delete(runId);
      turns.delete(runId);
      return n;
    },
  };
}
