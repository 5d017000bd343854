/**
 * What saving and restoring read of a live run (the run host's `LiveRun` implements it): the
 * port that keeps durability/ below runs/ (ADR-0070). Saves read it to build a RunBlob;
 * restore re-seeds the ledger, epochs and usage of a run the host recreated.
 * @see SPEC §8
 */
import type { HistorySubmission, RunFaultRecord, RunOutcome, RunStatus } from "@jr2/wire";
import type { AnyActorRef } from "xstate";
import type { OwedAbort } from "./owed-aborts.js";
import type { RepoSlotRecord } from "./store/run-blob.js";
import type { LedgerEntry } from "./store/run-store.js";
import type { TurnRecord } from "./transcript-rows.js";
import type { UsageRecord } from "./usage-totals.js";

export interface SavedRun {
  readonly runId: string;
  readonly workflow: string;
  /** The Machine's fingerprint when the run started (§8). */
  readonly fingerprint: string;
  readonly input: unknown;
  readonly createdAt: Date;
  /** The run's root actor: its persisted snapshot and its system's delayed events are saved. */
  readonly actor: AnyActorRef;
  /** iid → the admission of its newest Turn (§5.4). */
  readonly ledger: Map<string, LedgerEntry>;
  /** Continued conversation address → its epoch (§5.3). */
  readonly epochs: Map<string, number>;
  /** Usage records by key (ADR-0255). */
  readonly usage: Map<string, UsageRecord>;
  /** The run's Repo Slots by `<workspace>/<slot>` (issue 28); saved in the blob. */
  readonly repoSlots?: Map<string, RepoSlotRecord>;
  /** The newest Worktree commit per slot, as of now (issue 28); saved in the blob. */
  readonly repoCommits?: Map<string, string>;
  /** Keys of recorded transcript rows (ADR-0257); restore re-seeds them from the store. */
  readonly transcriptKeys?: Set<string>;
  /** Its conversations' byte-exact history (ADR-0176); restore reloads it from the store. */
  readonly histories?: { record(iid: string, part: HistorySubmission): boolean };
  /** Turn records by turnId (ADR-0257); restore re-seeds them from the store. */
  readonly turns?: Map<string, TurnRecord>;
  /**
   * The turnIds whose registration is committed (ADR-0296 "Registration first"): a record of any
   * other Turn waits for the run's next save. Restore seeds it from the stored records; absent:
   * every record is written on its own.
   */
  readonly committedTurns?: Set<string>;
  /** The aborts the run owes by iid (ADR-0280): saved with the state that owes them. */
  readonly owedAborts?: Map<string, OwedAbort>;
  /** The open Gates by id (logged when first saved open). */
  readonly gates: ReadonlyMap<string, unknown>;
  /** A Gate opened since the last save. */
  gatesUnsaved: boolean;
  /** Its last save failed: nothing more is saved or told (ADR-0253). */
  frozen: boolean;
  /** Let go (ADR-0280): its rows still in flight are dropped, never written again (ADR-0284). */
  readonly movedAway?: boolean;
  readonly status: RunStatus;
  readonly fault: { reason: string; detail?: string; cause?: string } | undefined;
  /** How it ended, once settled (ADR-0062); saved with the settled status. */
  readonly outcome?: RunOutcome | undefined;
  /** Every `agent.fault` of the run (ADR-0062); restore re-seeds it from the blob. */
  readonly faults?: RunFaultRecord[];
  /** Every Machine's fingerprint and Agent's Menu digest (ADR-0271); saved with the blob. */
  readonly digests?: {
    machineFingerprints: Record<string, string>;
    menuDigests: Record<string, string>;
    sourceDigest?: string;
  };
  /** Ends the run as faulted with `reason` (a snapshot that cannot be persisted). */
  faultRun(reason: string): void;
}

/** A run restore recreates: a {@link SavedRun} it starts and lets settle. */
export interface RestorableRun extends SavedRun {
  start(): void;
  /** Resolves once every actor of the run is idle. */
  settle(): Promise<void>;
}
