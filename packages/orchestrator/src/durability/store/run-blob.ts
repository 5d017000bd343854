/**
 * The persisted record of a run (SPEC §8): the RunBlob, its ledger entries and saved timers.
 * Kept apart from the store port (`run-store.ts` re-exports them) so the ownership port can
 * name a RunBlob without an import circle.
 * @see SPEC §8
 */
import type { HookResult, RunFaultRecord, RunOutcome, RunStatus, UsageTotals } from "@jr2/wire";

/**
 * A delayed event (`after`, delayed `sendTo`) saved from xstate's scheduler, because xstate's
 * persisted snapshot drops them (statelyai/xstate#5331). `dueAt` is epoch milliseconds.
 * @see SPEC §8, §13 "Restore"
 */
export interface SavedTimer {
  /** The scheduler's id (re-armed with the same one, so the state's exit still cancels it). */
  id: string;
  /** Actor paths below the run root (`""` = the root), as `actorPathOf` writes them. */
  sourcePath: string;
  targetPath: string;
  event: unknown;
  delay: number;
  startedAt: number;
  dueAt: number;
}

/**
 * An admission's ledger entry (§5.4): what restore re-attaches a Turn to. `harnessUrl` is the
 * Harness admitted to (its base URL), so a restore can read the rest of its usage (ADR-0255);
 * `child` names the Turn on the event log (ADR-0256).
 */
export interface LedgerEntry {
  turnId: string | null;
  submissionId: string;
  offset: string;
  streamUrl: string;
  harnessUrl?: string;
  /** The Turn as the feed names it, `<state path>#<agent>` (never an iid): its usage's `child` (ADR-0256). */
  child?: string;
  /**
   * The Turn's trace context (W3C `traceparent` of its `jr2.turn` span), so a restore continues
   * the trace (ADR-0421). Absent when tracing was off, and in rows written before it existed.
   */
  traceparent?: string;
}

/**
 * The persisted record of a run (SPEC §8): one row per run.
 * `ledger` maps iid → the admission of its newest Turn (§5.4); `epochs` maps a continued
 * conversation address → its epoch (§5.3).
 */
export interface RunBlob {
  runId: string;
  workflow: string;
  machineFingerprint: string;
  status: RunStatus;
  /** xstate's persisted snapshot (plain JSON). */
  snapshot: unknown;
  input: unknown;
  ledger: Record<string, LedgerEntry>;
  epochs: Record<string, number>;
  timers: SavedTimer[];
  usage: UsageTotals;
  fault?: { reason: string; detail?: string; cause?: string };
  /** How the run ended, once settled (ADR-0062); absent while running and in older blobs. */
  outcome?: RunOutcome;
  /** Every `agent.fault` of the run, routed or not (ADR-0062). */
  faults?: RunFaultRecord[];
  /**
   * Every Machine's fingerprint by path (`""` = the workflow's own, e.g. `working/body`), so a
   * nested Machine's change is drift too (ADR-0271). Absent in rows saved before it.
   */
  machineFingerprints?: Record<string, string>;
  /** Each Agent's Menu sha256 by `<machine path>/<agent>`: what resume compares (ADR-0271). */
  menuDigests?: Record<string, string>;
  /**
   * The sha256 of the workflow module the run ran under (ADR-0272): a run faulted by its Machine
   * is retried once it differs from the one served. Absent in rows saved before it, and for a
   * Machine not loaded from a file.
   */
  sourceDigest?: string;
  /**
   * The run's Repo Slots by `<workspace>/<slot>` (issue 28): where each Worktree is and its
   * branch, as attached. Absent for a run without Repo Slots.
   */
  repoSlots?: Record<string, RepoSlotRecord>;
  /**
   * The newest Worktree commit recorded per slot (`<workspace>/<slot>` → commit id), as of this
   * save: a version's files are its commit (fork and retry check it out). Absent: none yet.
   */
  repoCommits?: Record<string, string>;
  /** ISO-8601. */
  createdAt: string;
  updatedAt: string;
}

/** One Repo Slot of a run as attached (issue 28). */
export interface RepoSlotRecord {
  workspace: string;
  slot: string;
  path: string;
  branch: string;
  base: string;
  /** The slot's URL, credentials redacted (absent in runs attached before it was kept). */
  url?: string;
  /** The slot's `ref` as authored (absent: the remote's HEAD). */
  ref?: string;
  /** What publish pushed, once it did. */
  pushed?: { commit: string; url: string };
  /** What the publish hook did after the push (ADR-0226). */
  hook?: HookResult;
}
