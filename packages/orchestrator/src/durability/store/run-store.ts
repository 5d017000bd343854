import type { PickAnswer, RunFeedEvent, RunOutcome, RunStatus, VersionCause } from "@jr2/wire";
import { type TurnRecord, turnRecordsOfSave } from "../transcript-rows.js";
import type { UsageRecord } from "../usage-totals.js";
import { createMemoryHistories, type HistoryStore } from "./history-store.js";
import type { FeedNotices, RunOwnership } from "./ownership.js";
import type { RunBlob } from "./run-blob.js";
import { createMemoryStartKeys, type StartKeys } from "./start-keys.js";
import { createMemoryTranscripts, type TranscriptStore } from "./transcript-store.js";
import { causeOfSave } from "./version-cause.js";
import {
  createMemoryVersions,
  DEFAULT_VERSIONS_KEPT,
  isSettled,
  type StoredVersion,
  type StoredVersionSummary,
} from "./versions.js";

export type { LedgerEntry, RunBlob, SavedTimer } from "./run-blob.js";

/** A kept version of a run whole (ADR-0270): its summary and its RunBlob as saved. */
export type StoredRunVersion = StoredVersion<RunBlob>;

/**
 * A pick's stored answer, keyed by (iid, turnId, toolCallId) within its run, saved with the
 * snapshot it produced (§4.3, ADR-0252). `turnId` is the Turn's the pick was decided in (`null`:
 * a Turn without turnId, §5.4, or an answer stored before ADR-0252). `scope` is the
 * registration scope the pick was answered in (§4.4): a repeat from another scope is never
 * served it, also after a restart.
 */
export interface StoredPickAnswer {
  iid: string;
  turnId: string | null;
  toolCallId: string;
  scope: string;
  answer: PickAnswer;
  /** The Turn's record as this pick leaves it: written in the same transaction (never lost to a stop after it). */
  turn?: TurnRecord;
}

/**
 * What check 0 looks a stored answer up by (§4.3, ADR-0252). With `turnId`, only that Turn's
 * answer; without (a pick from a Harness that does not send it), the newest answer stored for
 * `(iid, toolCallId)` in any Turn — the pre-ADR-0252 key.
 */
export interface PickKey {
  iid: string;
  toolCallId: string;
  turnId?: string;
}

/**
 * The store port (SPEC §8). The embedded default is SQLite (`store/sqlite.ts`); a server
 * database can implement the same port. `save` resolves only after the transaction committed:
 * a pick is answered only then (§4.3).
 */
export interface RunStore extends TranscriptStore {
  /**
   * Present on a store several instances share (PostgreSQL, ADR-0280): this instance's leases.
   * Every write of a run it does not hold throws FencedError. Absent: one process owns every run.
   */
  readonly ownership?: RunOwnership;
  /** Present on a shared store: committed events of runs hosted anywhere (ADR-0280). */
  readonly notices?: FeedNotices;
  /** Run starts' idempotency keys (ADR-0282); absent (a store built elsewhere): kept in memory by the host. */
  readonly startKeys?: StartKeys;
  /**
   * The byte-exact history of live runs' conversations (issue 27, ADR-0176); absent (a store
   * built elsewhere): kept in memory only. A save of a settled blob deletes the run's.
   */
  readonly conversationHistory?: HistoryStore;
  /**
   * Writes the blob, the pick answers, usage records (each once by its key), the run's feed
   * events (each once by its `seq`: the state changes this blob holds, ADR-0256) and the blob
   * again as the run's next version (ADR-0270) in one transaction. The version's cause is
   * `cause`, else read from the events ({@link causeOfSave}). A save of a settled blob folds
   * the run's versions ({@link foldSettled}). With `when.ifStatus`, a conditional update: it
   * writes only while the stored run's status is that one (issue 22: a drifted run's cancel and
   * resume race; exactly one commits). `turns` and each pick's `turn` are upserted as Turn
   * records in the same transaction, in that order (a stored `picked` record is never replaced
   * by a non-picked one: `losesPick`; ADR-0296).
   * @throws RunStatusChangedError (nothing written) when `when.ifStatus` does not match
   */
  save(
    blob: RunBlob,
    picks?: readonly StoredPickAnswer[],
    usage?: readonly UsageRecord[],
    events?: readonly RunFeedEvent[],
    cause?: VersionCause,
    when?: SaveCondition,
    turns?: readonly TurnRecord[],
  ): Promise<void>;
  /** The run's kept versions, oldest first, without their blobs (ADR-0270); `[]` for an unknown run. */
  versions(runId: string): Promise<StoredVersionSummary[]>;
  /**
   * One kept version whole, or undefined (never kept, or pruned).
   * @throws DamagedRunError when its stored blob cannot be decoded
   */
  version(runId: string, version: number): Promise<StoredRunVersion | undefined>;
  /**
   * Appends feed events of `runId` to its event log, each once by its `seq` (one already stored is
   * ignored), with their original `seq` and `at`. Never touches the blob (ADR-0256).
   */
  appendEvents(runId: string, events: readonly RunFeedEvent[]): Promise<void>;
  /** One page of `runId`'s event log: up to `limit` events with `seq >= from`, in `seq` order. */
  events(runId: string, from: number, limit: number): Promise<RunFeedEvent[]>;
  /** The highest stored `seq` of `runId`'s log; undefined when it has none. */
  lastEventSeq(runId: string): Promise<number | undefined>;
  /**
   * Retention (ADR-0256, ADR-0257, ADR-0270): deletes the event log, the transcript rows, the
   * Turn records and the versions of every settled run (`done`, `faulted`, `cancelled`) last
   * updated before `before` (ISO-8601), together. Live and drifted runs keep theirs.
   * @returns the rows deleted
   */
  pruneEvents(before: string): Promise<number>;
  /**
   * The run's blob. @throws DamagedRunError when the stored row cannot be decoded (the other
   * runs are still readable)
   */
  load(runId: string): Promise<RunBlob | undefined>;
  /**
   * Records model requests' usage of `runId`, each once by (iid, submissionId, position):
   * a record already stored is ignored (ADR-0255). Never touches the blob.
   */
  recordUsage(runId: string, records: readonly UsageRecord[]): Promise<void>;
  /** The run's recorded usage, in recording order. */
  usage(runId: string): Promise<UsageRecord[]>;
  /**
   * Runs matching `filter`, newest first (`updatedAt`, then `runId`, descending), read by index;
   * at most `filter.limit`, those strictly after `filter.after` (ADR-0062).
   */
  list(filter?: RunListFilter): Promise<StoredRunSummary[]>;
  /** Every run whose status is `running`: what restore recreates. */
  live(): Promise<RunBlob[]>;
  /** The stored answer for `key` in `runId` (see {@link PickKey}), if any. */
  pickAnswer(runId: string, key: PickKey): Promise<StoredPickAnswer | undefined>;
  close(): Promise<void>;
}

/** A conditional save's condition (issue 22). */
export interface SaveCondition {
  /** Write only while the stored run's status is this. */
  ifStatus: RunStatus;
}

/** A conditional save found another status stored (`found`; undefined: no such run): nothing was written. */
export class RunStatusChangedError extends Error {
  constructor(
    readonly runId: string,
    readonly expected: RunStatus,
    readonly found: RunStatus | undefined,
  ) {
    super(
      `run \`${runId}\` is ${found ?? "not stored"}, not ${expected}: the conditional save wrote nothing`,
    );
    this.name = "RunStatusChangedError";
  }
}

/** Throws {@link RunStatusChangedError} unless `found` is what `when` asks for (no condition: passes). */
export function checkCondition(runId: string, when: SaveCondition | undefined, found: RunStatus | undefined) {
  if (when && found !== when.ifStatus) throw new RunStatusChangedError(runId, when.ifStatus, found);
}

/** What {@link RunStore.list} filters and pages by (ADR-0062). */
export interface RunListFilter {
  status?: RunStatus;
  workflow?: string;
  outcome?: RunOutcome;
  /** At most this many; default all. */
  limit?: number;
  /** Only runs listed after this one (the last of the previous page). */
  after?: { updatedAt: string; runId: string };
}

/** A run as the store lists it: its columns, no blob. `finalState`: the settled state value. */
export type StoredRunSummary = Pick<RunBlob, "runId" | "workflow" | "status" | "updatedAt"> & {
  outcome?: RunOutcome;
  finalState?: unknown;
};

/** The row order of {@link RunStore.list}: newer first, then the greater runId. */
export function listedBefore(a: StoredRunSummary, b: StoredRunSummary): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? 1 : -1;
  return a.runId === b.runId ? 0 : a.runId < b.runId ? 1 : -1;
}

/** True when `run` matches `filter` (paging aside). */
export function matchesFilter(run: StoredRunSummary, filter: RunListFilter | undefined): boolean {
  if (filter?.status !== undefined && run.status !== filter.status) return false;
  if (filter?.workflow !== undefined && run.workflow !== filter.workflow) return false;
  return filter?.outcome === undefined || run.outcome === filter.outcome;
}

/**
 * The blob's outcome; a blob from before ADR-0062 that faulted or was cancelled has its status
 * for one (a `done` one's is unknown).
 */
export function outcomeOfBlob(blob: RunBlob): RunOutcome | undefined {
  if (blob.outcome !== undefined) return blob.outcome;
  return blob.status === "faulted" || blob.status === "cancelled" ? blob.status : undefined;
}

/** The listed columns of a blob. */
export function summaryOfBlob(blob: RunBlob): StoredRunSummary {
  const { runId, workflow, status, updatedAt } = blob;
  const outcome = outcomeOfBlob(blob);
  const settled = status !== "running" && status !== "drifted";
  const finalState = settled ? ((blob.snapshot as { value?: unknown } | null)?.value ?? null) : undefined;
  return {
    runId,
    workflow,
    status,
    updatedAt,
    ...(outcome === undefined ? {} : { outcome }),
    ...(finalState === undefined ? {} : { finalState }),
  };
}

/** A stored run's row cannot be decoded into a {@link RunBlob}: names the run and what is wrong. */
export class DamagedRunError extends Error {
  constructor(
    readonly runId: string,
    detail: string,
  ) {
    super(`run \`${runId}\`: ${detail}`);
    this.name = "DamagedRunError";
  }
}

/**
 * Decodes a stored row into a RunBlob, checking the fields restore relies on.
 * @throws DamagedRunError naming the run and the fault (`not JSON: …`, `missing \`workflow\``)
 */
export function decodeRunBlob(runId: string, text: string): RunBlob {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new DamagedRunError(
      runId,
      `its blob is not JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new DamagedRunError(runId, "its blob is not a JSON object");
  const blob = value as Record<string, unknown>;
  const missing = [
    ...["runId", "workflow", "machineFingerprint", "status", "createdAt", "updatedAt"].filter(
      (k) => typeof blob[k] !== "string",
    ),
    ...["ledger", "epochs"].filter((k) => typeof blob[k] !== "object" || blob[k] === null),
    ...(Array.isArray(blob.timers) ? [] : ["timers"]),
    ...(blob.status === "running" && !("snapshot" in blob) ? ["snapshot"] : []),
  ];
  if (missing.length > 0)
    throw new DamagedRunError(runId, `its blob lacks ${missing.map((k) => `\`${k}\``).join(", ")}`);
  if (blob.runId !== runId)
    throw new DamagedRunError(runId, `its blob names another run (\`${String(blob.runId)}\`)`);
  return value as RunBlob;
}

/** Options of a store (ADR-0270). */
export interface StoreOptions {
  /** Versions a settled run keeps (`JR2_VERSIONS_KEPT`); default 20. */
  versionsKept?: number;
}

/** An in-memory store for tests and `--data-dir none`; same semantics, nothing survives the process. */
export function createMemoryStore(options: StoreOptions = {}): RunStore {
  const runs = new Map<string, string>();
  // Insertion order is storage order: the newest answer of a key is the last one inserted.
  const picks = new Map<string, StoredPickAnswer & { runId: string }>();
  const key = (runId: string, iid: string, turnId: string | null, toolCallId: string) =>
    JSON.stringify([runId, iid, turnId, toolCallId]);
  const usage = new Map<string, Map<string, UsageRecord>>();
  const record = (runId: string, records: readonly UsageRecord[]) => {
    const rows = usage.get(runId) ?? new Map<string, UsageRecord>();
    usage.set(runId, rows);
    for (const r of records) {
      const k = JSON.stringify([r.iid, r.submissionId, r.position]);
      if (!rows.has(k)) rows.set(k, structuredClone(r));
    }
  };
  const log = createMemoryEventLog();
  const transcripts = createMemoryTranscripts();
  const versions = createMemoryVersions<RunBlob>(options.versionsKept ?? DEFAULT_VERSIONS_KEPT);
  const histories = createMemoryHistories((runId) => {
    const row = runs.get(runId);
    return row !== undefined && isSettled((JSON.parse(row) as RunBlob).status);
  });
  return {
    startKeys: createMemoryStartKeys(),
    conversationHistory: { writeHistory: histories.writeHistory, histories: histories.histories },
    recordTranscript: (runId, rows) => transcripts.recordTranscript(runId, rows),
    transcriptKeys: (runId) => transcripts.transcriptKeys(runId),
    transcript: (runId, turnId) => transcripts.transcript(runId, turnId),
    prefixes: (runId, iid) => transcripts.prefixes(runId, iid),
    recordTurns: (runId, turns) => transcripts.recordTurns(runId, turns),
    turns: (runId) => transcripts.turns(runId),
    async save(blob, answers = [], records = [], events = [], cause, when, turns = []) {
      const stored = runs.get(blob.runId);
      const previous = stored ? (JSON.parse(stored) as RunBlob) : undefined;
      checkCondition(blob.runId, when, previous?.status);
      // Encoded before anything changes: a part that cannot be stored commits nothing (as a transaction).
      const row = JSON.stringify(blob);
      JSON.stringify([answers, records, events, turns]);
      runs.set(blob.runId, row);
      versions.add(blob, (first) => cause ?? causeOfSave(blob, events, first, previous));
      log.append(blob.runId, events);
      for (const { turn: _turn, ...p } of answers) {
        const k = key(blob.runId, p.iid, p.turnId, p.toolCallId);
        if (!picks.has(k)) picks.set(k, { ...structuredClone(p), runId: blob.runId });
      }
      void transcripts.recordTurns(blob.runId, turnRecordsOfSave(answers, turns));
      record(blob.runId, records);
      if (isSettled(blob.status)) histories.dropRun(blob.runId);
    },
    async recordUsage(runId, records) {
      record(runId, records);
    },
    async appendEvents(runId, events) {
      log.append(runId, events);
    },
    events: async (runId, from, limit) => log.page(runId, from, limit),
    lastEventSeq: async (runId) => log.last(runId),
    async pruneEvents(before) {
      const settled = [...runs.values()]
        .map((row) => JSON.parse(row) as RunBlob)
        .filter((b) => isSettled(b.status) && b.updatedAt < before);
      return settled.reduce(
        (n, b) =>
          n +
          log.drop(b.runId) +
          transcripts.drop(b.runId) +
          versions.drop(b.runId) +
          histories.dropRun(b.runId),
        0,
      );
    },
    versions: async (runId) => versions.list(runId),
    version: async (runId, version) => versions.get(runId, version),
    async usage(runId) {
      return [...(usage.get(runId)?.values() ?? [])].map((r) => structuredClone(r));
    },
    async load(runId) {
      const row = runs.get(runId);
      return row ? (JSON.parse(row) as RunBlob) : undefined;
    },
    async list(filter) {
      const after = filter?.after;
      const listed = [...runs.values()]
        .map((row) => summaryOfBlob(JSON.parse(row) as RunBlob))
        .filter((s) => matchesFilter(s, filter))
        .sort(listedBefore)
        .filter((s) => !after || listedBefore({ ...s, ...after }, s) < 0);
      return filter?.limit === undefined ? listed : listed.slice(0, filter.limit);
    },
    async live() {
      return [...runs.values()]
        .map((row) => JSON.parse(row) as RunBlob)
        .filter((b) => b.status === "running");
    },
    async pickAnswer(runId, { iid, turnId, toolCallId }) {
      let found: (StoredPickAnswer & { runId: string }) | undefined;
      if (turnId !== undefined) found = picks.get(key(runId, iid, turnId, toolCallId));
      else
        for (const p of picks.values())
          if (p.runId === runId && p.iid === iid && p.toolCallId === toolCallId) found = p;
      if (!found) return undefined;
      const { runId: _runId, ...stored } = found;
      return structuredClone(stored);
    },
    async close() {},
  };
}

/** The memory store's event logs: per run, events by `seq` (each kept once, a copy). */
function createMemoryEventLog() {
  const logs = new Map<string, Map<number, RunFeedEvent>>();
  return {
    append(runId: string, events: readonly RunFeedEvent[]): void {
      if (events.length === 0) return;
      const log = logs.get(runId) ?? new Map<number, RunFeedEvent>();
      logs.set(runId, log);
      for (const e of events) if (!log.has(e.seq)) log.set(e.seq, structuredClone(e));
    },
    page(runId: string, from: number, limit: number): RunFeedEvent[] {
      return [...(logs.get(runId)?.values() ?? [])]
        .filter((e) => e.seq >= from)
        .sort((a, b) => a.seq - b.seq)
        .slice(0, Math.max(0, limit))
        .map((e) => structuredClone(e));
    },
    last(runId: string): number | undefined {
      const seqs = [...(logs.get(runId)?.keys() ?? [])];
      return seqs.length === 0 ? undefined : Math.max(...seqs);
    },
    drop(runId: string): number {
      const n = logs.get(runId)?.size ?? 0;
      logs.delete(runId);
      return n;
    },
  };
}
