/**
 * The run host (SPEC §4, §5.1, §6, §8): its contract ({@link RunHost}) and its composition —
 * the shared {@link HostState} built once and handed to each part, one file per concern:
 * `pick-delivery.ts` (the pick path), `gate-delivery.ts` (Gates), `run-table.ts` (runs: start,
 * get, list, feed, cancel, eviction), `live-turns.ts` (Turn registration and surfaces),
 * `host-restore.ts` (restore, frozen-run reloads, close), `workflow-table.ts` (the served workflows).
 * @see docs/reference/lifecycle.md "The run host around a pick"
 */
import { randomBytes } from "node:crypto";
import type { Context } from "@jr2/telemetry";
import type {
  CancelAnswer,
  ForkAnswer,
  Gate,
  GateEventAnswer,
  PickAnswer,
  PickRequest,
  ResumeAnswer,
  ResumeRequest,
  RetryAnswer,
  RetryRequest,
  RunDetail,
  RunFeedEvent,
  RunHistory,
  RunListQuery,
  RunPage,
  RunRepos,
  RunSettledAnswer,
  RunStatus,
  RunSummary,
  RunVersion,
  Surface,
  TurnList,
  TurnTranscript,
  WorkflowMenu,
  WorkflowSummary,
} from "@jr2/wire";
import { type Logger, pino } from "pino";
import { createRunPersistence } from "../durability/persistence.js";
import type { RestoreReport } from "../durability/restore.js";
import { createMemoryStore, type RunStore } from "../durability/store/run-store.js";
import type { Caller } from "../turns/access.js";
import type { PlacementOptions } from "../turns/placement.js";
import { createRegistrationTable, type RegistrationTable } from "../turns/registration-table.js";
import { handPlayedTurnDriver, type TurnDriver } from "../turns/turn-driver.js";
import { type OrchestratorTelemetry, traceTurns } from "../turns/turn-spans.js";
import type { RunFeed } from "./feed.js";
import { type ForkAsk, forkRun } from "./fork.js";
import { createFrozenRuns } from "./frozen-runs.js";
import { announceGates, type GateClient, listGates, sendGateEvent } from "./gate-delivery.js";
import { runHistory, runVersion } from "./history-views.js";
import { closeHost, reloadFrozenRun, replaceFrozenRun, restoreHostRuns } from "./host-restore.js";
import { type HostState, serialized } from "./host-state.js";
import { letGoOfRun } from "./let-go.js";
import { readSurface, startTurn } from "./live-turns.js";
import { deliverPick } from "./pick-delivery.js";
import { attachRunRepos, publishRunRepos } from "./repo-slots.js";
import { runRepos, runSettled } from "./repo-views.js";
import { resumeRun } from "./resume-run.js";
import { retryRun } from "./retry-run.js";
import { listRuns, pageRuns } from "./run-list.js";
import { cancelRun, eventLogPage, evictWhenSaved, feedOf, getRun, startRun } from "./run-table.js";
import { countingUsage, countRunSettled, readRunsGauge } from "./run-telemetry.js";
import { createSettledFeeds } from "./settled-runs.js";
import { startRunOnce } from "./start-once.js";
import { listTurns, turnTranscript } from "./turn-views.js";
import { listWorkflows, readWorkflows, type WorkflowTable, workflowMenu } from "./workflow-table.js";

export type { WorkflowTable } from "./workflow-table.js";

/** Options of {@link createRunHost}. */
export interface RunHostOptions {
  workflows: WorkflowTable;
  /** pino logger; default silent. */
  logger?: Logger;
  /** The clock (feed and run times); default `() => new Date()`. */
  clock?: () => Date;
  /**
   * The run store (§8): RunBlobs and pick answers (§4.3 check 0). The host owns it and closes
   * it on `close()`. Default in memory (nothing survives the process).
   */
  store?: RunStore;
  /** The live surfaces; default a fresh table. */
  registrations?: RegistrationTable;
  /** Runs each registered Turn's mechanics; default {@link handPlayedTurnDriver} (`--harness none`). */
  turnDriver?: TurnDriver;
  /** Where Turns run (§5.2); absent: every Turn is played by hand in the instance scope. */
  placement?: PlacementOptions;
  /** Mints run ids (no `/`); default `run-<12 hex>`. */
  mintRunId?: () => string;
  /** Backoff of background save retries and frozen-run reloads (ADR-0253); default 0.5 s → 30 s. */
  saveRetry?: { minMs?: number; maxMs?: number; logEveryMs?: number };
  /** Spans (a trace per Turn, pick spans) and metrics (ADR-0421); absent: none are recorded. */
  telemetry?: OrchestratorTelemetry;
}

/**
 * The domain-level run host: runs of the served workflows, their Turns' surfaces, pick
 * delivery, Gates, the run feed. No HTTP here — the routes are a thin adapter over it.
 * Methods throw {@link Jr2Error} with codes of @jr2/wire's table; nothing a caller sends
 * crashes it.
 * @see SPEC §4, §5.1, §6
 */
export interface RunHost {
  /** `GET /workflows`. */
  listWorkflows(): WorkflowSummary[];
  /** `GET /workflows/:name/menu`, one entry per Machine. @throws JR2_ERR_WORKFLOW_NOT_FOUND */
  workflowMenu(name: string): WorkflowMenu;
  /**
   * Starts a run of `workflow` with `input` validated against its input schema; resolves once
   * the run settled (its first Turns are registered).
   * @throws JR2_ERR_WORKFLOW_NOT_FOUND, JR2_ERR_RUN_INPUT_INVALID (with `issues`; an unknown key
   *   is refused, naming the accepted keys)
   */
  startRun(workflow: string, input: unknown): Promise<{ runId: string }>;
  /**
   * {@link startRun} once per idempotency `key` within 24 h (ADR-0282): a repeat answers the
   * first start's run with `replayed: true`.
   * @throws JR2_ERR_IDEMPOTENCY_KEY_INVALID, JR2_ERR_IDEMPOTENCY_KEY_CONFLICT, and startRun's
   */
  startRunOnce(workflow: string, input: unknown, key: string): Promise<{ runId: string; replayed: boolean }>;
  /**
   * `GET /runs/:runId`: a live run from memory, a settled one read back from the store
   * (ADR-0260). @throws JR2_ERR_RUN_NOT_FOUND
   */
  getRun(runId: string): Promise<RunDetail>;
  /**
   * `GET /runs` without `limit`/`cursor`: every run matching (a status, or the query's status,
   * workflow and outcome), newest first; live ones as memory has them now (ADR-0062).
   */
  listRuns(query?: RunStatus | RunListQuery): Promise<RunSummary[]>;
  /** `GET /runs?limit=&cursor=`: one page. @throws JR2_ERR_REQUEST_INVALID (a bad cursor) */
  pageRuns(query: RunListQuery): Promise<RunPage>;
  /**
   * The run's feed as memory holds it: a live run's tail; a recently settled run's as it ended
   * (ADR-0260); an older settled run's none (its log is in the store: {@link RunHost.eventLog}),
   * or one status event for a run settled before the log existed. @throws JR2_ERR_RUN_NOT_FOUND
   */
  feedOf(runId: string): Promise<RunFeed>;
  /**
   * One page of the run's stored event log (ADR-0256): up to `limit` events with `seq >= from`,
   * in order, with their original `seq` and `at`.
   */
  eventLog(runId: string, from: number, limit: number): Promise<RunFeedEvent[]>;
  /** `GET /runs/:runId/turns`: its Turns in start order (ADR-0257). @throws JR2_ERR_RUN_NOT_FOUND */
  turns(runId: string): Promise<TurnList>;
  /**
   * `GET /runs/:runId/turns/:turnId`: the Turn, its prefix and its transcript entries in order
   * (ADR-0257). @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_TURN_NOT_FOUND
   */
  turnTranscript(runId: string, turnId: string): Promise<TurnTranscript>;
  /** `GET /runs/:runId/history`: its kept versions, oldest first (ADR-0270). @throws JR2_ERR_RUN_NOT_FOUND */
  history(runId: string): Promise<RunHistory>;
  /**
   * `GET /runs/:runId/history/:version`: one version whole (ADR-0270).
   * @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_VERSION_NOT_FOUND
   */
  historyVersion(runId: string, version: number): Promise<RunVersion>;
  /**
   * `POST /runs/:runId/fork`: a new run restored from version `ask.at`, with new identities and
   * an empty workspace (ADR-0270); resolves once it is committed and restored.
   * @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_VERSION_NOT_FOUND, JR2_ERR_FORK_DRIFTED,
   *   JR2_ERR_FORK_CONTEXT_INVALID, JR2_ERR_SERVICE_STOPPING
   */
  forkRun(runId: string, ask: ForkAsk): Promise<ForkAnswer>;
  /** The run's Repo Slots (issue 28): branch, base, head, pushed, commits, diffstat. @throws JR2_ERR_RUN_NOT_FOUND */
  runRepos(runId: string): Promise<RunRepos>;
  /** Whether the store knows the run settled (issue 28 §6: the Harness's Worktree clean-up). */
  runSettled(runId: string): Promise<RunSettledAnswer>;
  /** True while the run is in memory and `running` (no store read: the feed route's check). */
  isLive(runId: string): boolean;
  /** What the host holds in memory (the soak bench and the memory regression test read it). */
  resident(): { runs: number; settledFeeds: number };
  /** `GET /agents/:iid/surface`. @throws JR2_ERR_TURN_NOT_FOUND (also for another scope), JR2_ERR_SERVICE_STOPPING */
  readSurface(iid: string, caller: Caller): Surface;
  /**
   * `POST /agents/:iid/picks` (§4.3), at most once per (iid, turnId, toolCallId) (ADR-0252).
   * @throws JR2_ERR_TURN_NOT_FOUND (also for a pick whose turnId is not the live Turn's and has
   *   no stored answer), JR2_ERR_SERVICE_STOPPING
   */
  deliverPick(iid: string, caller: Caller, pick: PickRequest, trace?: Context): Promise<PickAnswer>;
  /** The run's open Gates (none once it settled). @throws JR2_ERR_RUN_NOT_FOUND */
  listGates(runId: string): Promise<Gate[]>;
  /**
   * `POST /runs/:runId/gates/:gateId/events` (§6).
   * @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_NOT_LIVE, JR2_ERR_GATE_NOT_FOUND,
   *   JR2_ERR_GATE_EVENT_NOT_ACCEPTED, JR2_ERR_GATE_PAYLOAD_INVALID, JR2_ERR_GATE_NOT_NOW (with `acceptsNow`)
   */
  sendGateEvent(
    runId: string,
    gateId: string,
    body: { type: string } & Record<string, unknown>,
    by?: GateClient,
  ): Promise<GateEventAnswer>;
  /**
   * `POST /runs/:runId/cancel`: a live run, or a drifted one (closed with no Machine, issue 22).
   * `ask.expect`: the status the caller saw; `ask.by`: who asked (on the log).
   * @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_NOT_LIVE, JR2_ERR_RUN_STATUS_CHANGED
   */
  cancelRun(runId: string, ask?: { expect?: RunStatus; by?: GateClient }): Promise<CancelAnswer>;
  /**
   * `POST /runs/:runId/resume` (ADR-0271): a drifted run against the served Machine; a dry run
   * without `acceptDrift`. @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_NOT_DRIFTED,
   *   JR2_ERR_WORKFLOW_NOT_FOUND, JR2_ERR_RUN_RESUME_STATES_MISSING
   */
  resumeRun(runId: string, request: ResumeRequest, by?: GateClient): Promise<ResumeAnswer>;
  /**
   * `POST /runs/:runId/retry` (ADR-0271): the faulted Turn retried in place from the last kept
   * version before its fault. @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_NOT_RETRYABLE
   */
  retryRun(runId: string, by?: GateClient, request?: RetryRequest): Promise<RetryAnswer>;
  /**
   * Restores the store's runs (§8): live runs recreated from their snapshots (Turns re-attach,
   * Gates re-open, timers re-armed), changed Machines marked `drifted`, settled runs readable.
   * Call once, before serving. Never throws for one bad run (it is kept as faulted). On a
   * shared store (`store.ownership`, ADR-0280) only the runs this instance adopts are restored,
   * and the ownership loop starts: every `leaseMs / 3` renew, let go of lost runs, adopt and
   * restore what expired (stopped by `close()`).
   */
  restore(): Promise<RestoreReport>;
  /** The registration table (read-only use: tests, the Agent actor). */
  readonly registrations: RegistrationTable;
  /**
   * The run store's health for `/healthz` (ADR-0253): `failing` while its last commit failed;
   * `frozenRuns` counts runs waiting to be reloaded from their last save.
   */
  storeHealth(): { store: "ok" | "failing"; frozenRuns: number; error?: string };
  /**
   * Shutdown (§8): agent routes answer 503 from now on, pending saves commit, then every run's
   * actors stop without being saved (Turns stop with `shuttingDown()` true: no remote abort),
   * so each live run stays restorable; the store is closed.
   */
  close(): Promise<void>;
}

/**
 * Creates a run host over a table of workflows. Logs each workflow's walk warnings once.
 * @example const host = createRunHost({ workflows: new Map([["review", machine]]) });
 * @see SPEC §4, §5.1
 */
export function createRunHost(options: RunHostOptions): RunHost {
  const state = createHostState(options);
  return {
    registrations: state.registrations,
    storeHealth: () => storeHealth(state),
    listWorkflows: () => listWorkflows(state.infos),
    workflowMenu: (name) => workflowMenu(state.infos, name),
    startRun: (workflow, input) => startRun(state, workflow, input),
    startRunOnce: (workflow, input, key) => startRunOnce(state, workflow, input, key),
    getRun: (runId) => getRun(state, runId),
    listRuns: (query) => listRuns(state, typeof query === "string" ? { status: query } : query),
    pageRuns: (query) => pageRuns(state, query),
    feedOf: (runId) => feedOf(state, runId),
    eventLog: (runId, from, limit) => eventLogPage(state, runId, from, limit),
    turns: (runId) => listTurns(state, runId),
    turnTranscript: (runId, turnId) => turnTranscript(state, runId, turnId),
    history: (runId) => runHistory(state, runId),
    historyVersion: (runId, version) => runVersion(state, runId, version),
    forkRun: (runId, ask) => forkRun(state, runId, ask),
    runRepos: (runId) => runRepos(state, runId),
    runSettled: (runId) => runSettled(state, runId),
    isLive: (runId) => state.runs.get(runId)?.status === "running",
    resident: () => ({ runs: state.runs.size, settledFeeds: state.settledFeeds.size }),
    readSurface: (iid, caller) => readSurface(state, iid, caller),
    deliverPick: (iid, caller, pick, trace) => deliverPick(state, iid, caller, pick, trace),
    listGates: (runId) => listGates(state, runId),
    sendGateEvent: (runId, gateId, body, by) => sendGateEvent(state, runId, gateId, body, by),
    cancelRun: (runId, ask) => cancelRun(state, runId, ask),
    resumeRun: (runId, request, by) => resumeRun(state, runId, request, by ?? "http"),
    retryRun: (runId, by, request) => retryRun(state, runId, by ?? "http", request ?? {}),
    restore: () => restoreHostRuns(state),
    close: () => closeHost(state),
  };
}

/** The host's state from its options; the parts reach each other through it (late-bound). */
function createHostState(options: RunHostOptions): HostState {
  const log = options.logger ?? pino({ level: "silent" });
  const now = options.clock ?? (() => new Date());
  const store = options.store ?? createMemoryStore();
  const { telemetry } = options;
  const persistence = countingUsage(
    createRunPersistence(store, log, now, {
      ...options.saveRetry,
      onRecovered: () => state.frozenRuns.recovered(),
      onFenced: (runId) => state.letGo(runId, "a write was refused by the fence"),
    }),
    telemetry,
    (iid) => state.registrations.get(iid),
  );
  const turnDriver = options.turnDriver ?? handPlayedTurnDriver;
  const { minMs, maxMs } = options.saveRetry ?? {};
  const state: HostState = {
    log,
    now,
    store,
    persistence,
    registrations: options.registrations ?? createRegistrationTable(),
    turnDriver: telemetry
      ? traceTurns(turnDriver, telemetry, (runId) => state.runs.get(runId)?.workflow ?? "")
      : turnDriver,
    placement: options.placement,
    workflows: options.workflows,
    infos: readWorkflows(options.workflows, log),
    mintRunId: options.mintRunId ?? (() => `run-${randomBytes(6).toString("hex")}`),
    runs: new Map(),
    settledFeeds: createSettledFeeds(),
    evicting: new WeakSet(),
    damaged: new Map(),
    chains: new Map(),
    frozenRuns: createFrozenRuns({
      store,
      persistence,
      log,
      now,
      serialized: (runId, fn) => serialized(state, runId, fn),
      ...(minMs === undefined ? {} : { minMs }),
      ...(maxMs === undefined ? {} : { maxMs }),
      restore: (blob, run, usage) => reloadFrozenRun(state, blob, run, usage),
      replace: (runId, outcome) => replaceFrozenRun(state, runId, outcome),
    }),
    hooks: {
      startTurn: (run, turn) => startTurn(state, run, turn),
      settled: (run) => announceGates(run),
      changed: (run) => {
        countRunSettled(telemetry, run);
        state.persistence.changed(run);
        evictWhenSaved(state, run);
      },
      recorded: (run, event) => state.persistence.recordEvent(run, event),
      attachRepos: (run, request) => attachRunRepos(state.placement, run, request),
      publishRepos: (run, request) => publishRunRepos(state.placement, run, request),
      now,
    },
    drains: new AbortController(),
    stopping: false,
    telemetry,
    ownership: store.ownership,
    ownershipLoop: undefined,
    letGo: (runId, why) => letGoOfRun(state, runId, why),
  };
  readRunsGauge(telemetry, () => state.runs.values());
  return state;
}

/** `/healthz`'s store part (ADR-0253). */
function storeHealth(state: HostState): ReturnType<RunHost["storeHealth"]> {
  const { failing, error } = state.persistence.storeState();
  const frozenRuns = state.frozenRuns.size;
  return {
    store: failing || frozenRuns > 0 ? "failing" : "ok",
    frozenRuns,
    ...(error === undefined ? {} : { error }),
  };
}
