/**
 * What the parts of one run host share — the pick path, the Gate path, the run table, restore —
 * and the two primitives every path that changes a run goes through: the per-run chain
 * ({@link serialized}) and the foreground save ({@link saveOrStop}). `createRunHost` builds the
 * state once and passes it to each part; no part keeps state of its own.
 * @see SPEC §4.3, §8; ADR-0253, ADR-0260
 */
import { Jr2Error } from "@jr2/wire";
import type { Logger } from "pino";
import type { RunPersistence } from "../durability/persistence.js";
import { FencedError, type RunOwnership } from "../durability/store/ownership.js";
import type { RunBlob, RunStore, StoredPickAnswer } from "../durability/store/run-store.js";
import type { PlacementOptions } from "../turns/placement.js";
import type { RegistrationTable } from "../turns/registration-table.js";
import type { TurnDriver } from "../turns/turn-driver.js";
import type { OrchestratorTelemetry } from "../turns/turn-spans.js";
import type { FrozenRuns } from "./frozen-runs.js";
import type { LiveRun, LiveRunHooks } from "./live-run.js";
import type { SettledFeeds } from "./settled-runs.js";
import type { WorkflowInfos, WorkflowTable } from "./workflow-table.js";

/** One run host's state, shared by its parts. */
export interface HostState {
  readonly log: Logger;
  /** The clock (feed and run times). */
  readonly now: () => Date;
  /** The run store (§8): RunBlobs and pick answers; closed on `close()`. */
  readonly store: RunStore;
  readonly persistence: RunPersistence;
  /** The live surfaces. */
  readonly registrations: RegistrationTable;
  /** Runs each registered Turn's mechanics. */
  readonly turnDriver: TurnDriver;
  /** Where Turns run (§5.2); undefined: every Turn is played by hand in the instance scope. */
  readonly placement: PlacementOptions | undefined;
  readonly workflows: WorkflowTable;
  readonly infos: WorkflowInfos;
  /** Mints run ids (no `/`). */
  readonly mintRunId: () => string;
  /**
   * Live runs only: a run leaves once its settled blob committed (ADR-0260); settled and
   * drifted runs are read back from the store when asked.
   */
  readonly runs: Map<string, LiveRun>;
  /** The most recently settled runs' feeds, bounded (ADR-0260). */
  readonly settledFeeds: SettledFeeds;
  /** Settled runs whose eviction is scheduled (after their settled blob commits). */
  readonly evicting: WeakSet<LiveRun>;
  /** Runs whose stored row cannot be decoded: their faulted stand-ins (few; ADR-0254). */
  readonly damaged: Map<string, RunBlob>;
  /**
   * Per-run chain: picks and Gate events of one run are decided one at a time, so each pick's
   * effect is saved only together with its answer (§4.3) and check 0 sees the last one.
   */
  readonly chains: Map<string, Promise<unknown>>;
  /** Runs whose foreground save failed, waiting to be reloaded (ADR-0253). */
  readonly frozenRuns: FrozenRuns;
  /** What every run of this host is created with: Turn registration, Gate announcements, saves. */
  readonly hooks: LiveRunHooks;
  /** Ended Turns' usage reads after a restore (ADR-0255); aborted on close. */
  readonly drains: AbortController;
  /** Spans and metrics (ADR-0421); absent: none are recorded. */
  readonly telemetry: OrchestratorTelemetry | undefined;
  /** Set by `close()`: agent routes answer 503 from then on. */
  stopping: boolean;
  /**
   * This instance's leases on a shared store (ADR-0280; the store's `ownership`); undefined on
   * an embedded store (one process owns every run).
   */
  readonly ownership: RunOwnership | undefined;
  /**
   * The ownership loop (renew, let go, adopt), once restore started it; stopped on close.
   * `renewNow`: a renewal now, judged by the database's answer (ADR-0283).
   */
  ownershipLoop: { stop(): Promise<void>; renewNow(): Promise<void> } | undefined;
  /**
   * Lets go of `runId` (ADR-0280 "Letting go", `let-go.ts`): stopped as at shutdown, unsaved,
   * out of memory. Late-bound here so the save path reaches it without an import circle.
   */
  readonly letGo: (runId: string, why: string) => void;
}

/** Runs `fn` after every earlier pick or Gate event of `runId` finished (the per-run chain). */
export async function serialized<T>(state: HostState, runId: string, fn: () => Promise<T>): Promise<T> {
  const { chains } = state;
  const next = (chains.get(runId) ?? Promise.resolve()).catch(() => {}).then(fn);
  chains.set(runId, next);
  try {
    return await next;
  } finally {
    if (chains.get(runId) === next) chains.delete(runId);
  }
}

/**
 * Saves `run` (with `picks`' answers, in one transaction) in the foreground: a failure answers
 * 503, never "saved". A save the fence refused lets the run go instead of freezing it: another
 * instance holds it now (ADR-0280).
 * @throws JR2_ERR_SERVICE_STOPPING while stopping, JR2_ERR_RUN_MOVED when fenced (or let go
 *   meanwhile), else JR2_ERR_STORE_FAILING with the run frozen (ADR-0253)
 */
export async function saveOrStop(
  state: HostState,
  run: LiveRun,
  picks?: readonly StoredPickAnswer[],
): Promise<void> {
  try {
    await state.persistence.save(run, picks);
  } catch (error) {
    if (error instanceof FencedError || run.movedAway) {
      state.letGo(run.runId, "a save was refused by the fence");
      throw new Jr2Error("JR2_ERR_RUN_MOVED", { runId: run.runId });
    }
    if (state.stopping) {
      state.log.error({ runId: run.runId, err: error }, "saving the run failed");
      throw new Jr2Error("JR2_ERR_SERVICE_STOPPING");
    }
    throw state.frozenRuns.freeze(run, error);
  }
}
