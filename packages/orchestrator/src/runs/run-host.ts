import { randomBytes } from "node:crypto";
import {
  type CancelAnswer,
  type Gate,
  type GateEventAnswer,
  Jr2Error,
  type PickAnswer,
  type PickRequest,
  type RunDetail,
  type RunStatus,
  type RunSummary,
  type Surface,
  type WorkflowMenu,
  type WorkflowSummary,
} from "@jr2/wire";
import { type Logger, pino } from "pino";
import type { AnyStateMachine } from "xstate";
import { crashPoint } from "../durability/crash-points.js";
import { createRunPersistence } from "../durability/persistence.js";
import { type RestoreReport, type RunRevival, restoreRun, restoreRuns } from "../durability/restore.js";
import { createMemoryStore, type RunBlob, type RunStore } from "../durability/store/run-store.js";
import { sumUsage } from "../durability/usage-totals.js";
import { readAllowedPicks } from "../menu/allowed-picks.js";
import { decidePick } from "../menu/delivery.js";
import { decideGateEvent } from "../menu/gate-decisions.js";
import { type MachineInfo, machineInfoOf } from "../menu/menu.js";
import { parseStrict } from "../menu/strict-keys.js";
import { type Caller, mayReach } from "../turns/access.js";
import { type PlacementOptions, placeTurn } from "../turns/placement.js";
import {
  createRegistrationTable,
  type Registration,
  type RegistrationTable,
} from "../turns/registration-table.js";
import { handPlayedTurnDriver, type TurnDriver } from "../turns/turn-driver.js";
import type { TurnStart } from "../xstate/run-binding.js";
import type { RunFeed } from "./feed.js";
import { createFrozenRuns, storeFailing } from "./frozen-runs.js";
import { LiveRun } from "./live-run.js";
import { gateOf, runDetailOf, runSummaryOf, storedRunDetail, storedRunSummary } from "./run-views.js";
import { createSettledFeeds, settledRunFeed } from "./settled-runs.js";
import { recordPickAnswer, registerTurn } from "./turn-registration.js";

/** The workflows a host serves: name → Machine (a module's base name, §4.1). */
export type WorkflowTable = ReadonlyMap<string, AnyStateMachine>;

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
   * `GET /runs/:runId`: a live run from memory, a settled one read back from the store
   * (ADR-0260). @throws JR2_ERR_RUN_NOT_FOUND
   */
  getRun(runId: string): Promise<RunDetail>;
  /** `GET /runs?status=`, newest first: the store's runs, live ones as memory has them now. */
  listRuns(status?: RunStatus): Promise<RunSummary[]>;
  /**
   * The run's feed: a live run's; a recently settled run's as it ended; an older settled run's
   * one status event from the store (ADR-0260). @throws JR2_ERR_RUN_NOT_FOUND
   */
  feedOf(runId: string): Promise<RunFeed>;
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
  deliverPick(iid: string, caller: Caller, pick: PickRequest): Promise<PickAnswer>;
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
  ): Promise<GateEventAnswer>;
  /** `POST /runs/:runId/cancel`. @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_NOT_LIVE */
  cancelRun(runId: string): Promise<CancelAnswer>;
  /**
   * Restores the store's runs (§8): live runs recreated from their snapshots (Turns re-attach,
   * Gates re-open, timers re-armed), changed Machines marked `drifted`, settled runs readable.
   * Call once, before serving. Never throws for one bad run (it is kept as faulted).
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
  const log = options.logger ?? pino({ level: "silent" });
  const now = options.clock ?? (() => new Date());
  const store = options.store ?? createMemoryStore();
  const persistence = createRunPersistence(store, log, now, {
    ...options.saveRetry,
    onRecovered: () => frozenRuns.recovered(),
  });
  const registrations = options.registrations ?? createRegistrationTable();
  const turnDriver = options.turnDriver ?? handPlayedTurnDriver;
  const mintRunId = options.mintRunId ?? (() => `run-${randomBytes(6).toString("hex")}`);
  /**
   * Live runs only: a run leaves once its settled blob committed (ADR-0260); settled and
   * drifted runs are read back from the store when asked.
   */
  const runs = new Map<string, LiveRun>();
  /** The most recently settled runs' feeds, bounded (ADR-0260). */
  const settledFeeds = createSettledFeeds();
  /** Settled runs whose eviction is scheduled (after their settled blob commits). */
  const evicting = new WeakSet<LiveRun>();
  /** Runs whose stored row cannot be decoded: their faulted stand-ins (few; ADR-0254). */
  const damaged = new Map<string, RunBlob>();
  /**
   * Per-run chain: picks and Gate events of one run are decided one at a time, so each pick's
   * effect is saved only together with its answer (§4.3) and check 0 sees the last one.
   */
  const runChains = new Map<string, Promise<unknown>>();
  const infos = new Map<string, MachineInfo>();
  let stopping = false;

  for (const [name, machine] of options.workflows) {
    const info = machineInfoOf(machine);
    infos.set(name, info);
    for (const warning of info.warnings) log.warn({ workflow: name, code: warning.code }, warning.message);
  }

  const workflowInfo = (name: string): MachineInfo => {
    const info = infos.get(name);
    if (!info) throw new Jr2Error("JR2_ERR_WORKFLOW_NOT_FOUND", { workflow: name, known: [...infos.keys()] });
    return info;
  };
  /** The run's stored blob. @throws JR2_ERR_RUN_NOT_FOUND */
  const storedBlob = async (runId: string): Promise<RunBlob> => {
    const blob = damaged.get(runId) ?? (await store.load(runId));
    if (!blob) throw new Jr2Error("JR2_ERR_RUN_NOT_FOUND", { runId });
    return blob;
  };
  /** The run in memory. @throws JR2_ERR_RUN_NOT_LIVE (settled, from the store), JR2_ERR_RUN_NOT_FOUND */
  const runOf = async (runId: string): Promise<LiveRun> => {
    const run = runs.get(runId);
    if (run) return run;
    const blob = await storedBlob(runId);
    throw new Jr2Error("JR2_ERR_RUN_NOT_LIVE", { runId, status: blob.status });
  };
  /** A live Turn's run. @throws JR2_ERR_TURN_NOT_FOUND when the run already left memory (settled) */
  const liveRunOfTurn = (registration: Registration): LiveRun => {
    const run = runs.get(registration.runId);
    if (!run) throw new Jr2Error("JR2_ERR_TURN_NOT_FOUND", { iid: registration.iid });
    return run;
  };
  /**
   * Once `run` settled: after its settled blob commits and every pick or Gate event of it in
   * flight finished (their feed events appended), it leaves memory (ADR-0260).
   */
  const evictWhenSaved = (run: LiveRun) => {
    if (run.status === "running" || evicting.has(run)) return;
    evicting.add(run);
    persistence.afterCommit(run, () => {
      void serialized(run.runId, async () => {
        if (runs.get(run.runId) !== run) {
          evicting.delete(run); // not (yet) served from memory: restore adds it, then asks again
          return;
        }
        settledFeeds.remember(run.runId, run.feed.since());
        runs.delete(run.runId);
      });
    });
  };
  /** Runs `fn` after every earlier pick or Gate event of `runId` finished. */
  const serialized = async <T>(runId: string, fn: () => Promise<T>): Promise<T> => {
    const next = (runChains.get(runId) ?? Promise.resolve()).catch(() => {}).then(fn);
    runChains.set(runId, next);
    try {
      return await next;
    } finally {
      if (runChains.get(runId) === next) runChains.delete(runId);
    }
  };
  /**
   * Saves in the foreground: a failure answers 503, never "saved" — `JR2_ERR_SERVICE_STOPPING`
   * while stopping, else `JR2_ERR_STORE_FAILING` with the run frozen (ADR-0253).
   */
  const saveOrStop = async (run: LiveRun, picks?: Parameters<typeof persistence.save>[1]) => {
    try {
      await persistence.save(run, picks);
    } catch (error) {
      if (stopping) {
        log.error({ runId: run.runId, err: error }, "saving the run failed");
        throw new Jr2Error("JR2_ERR_SERVICE_STOPPING");
      }
      throw frozenRuns.freeze(run, error);
    }
  };
  const restoreDeps = () => ({
    store,
    machineOf(workflow: string) {
      const machine = options.workflows.get(workflow);
      const info = infos.get(workflow);
      return machine && info ? { machine, fingerprint: info.fingerprint } : undefined;
    },
    revive: (init: RunRevival) => new LiveRun({ ...init, log, hooks }),
    log,
    nowMs: () => now().getTime(),
    restored: (run: LiveRun) => drainEndedTurns(run),
  });
  /** Ended Turns' usage reads after a restore (ADR-0255); aborted on close. */
  const drains = new AbortController();
  const drainEndedTurns = (run: LiveRun) => {
    const drain = turnDriver.drainUsage?.bind(turnDriver);
    if (!drain) return;
    const live = new Set(registrations.ofRun(run.runId).map((r) => r.iid));
    for (const [iid, entry] of run.ledger) {
      const harnessUrl = entry.harnessUrl ?? options.placement?.instanceHarnessUrl;
      if (live.has(iid) || !harnessUrl) continue;
      drain(
        { harnessUrl, iid, entry },
        (record) => persistence.recordUsage(run, record),
        drains.signal,
      ).catch((error: unknown) =>
        log.warn({ runId: run.runId, err: error }, "reading an ended Turn's usage failed"),
      );
    }
  };
  const frozenRuns = createFrozenRuns({
    store,
    persistence,
    log,
    now,
    serialized,
    ...(options.saveRetry?.minMs === undefined ? {} : { minMs: options.saveRetry.minMs }),
    ...(options.saveRetry?.maxMs === undefined ? {} : { maxMs: options.saveRetry.maxMs }),
    // A reloaded frozen run goes on with its feed: its followers keep following.
    restore: (blob, run, usage) =>
      restoreRun(
        blob,
        {
          ...restoreDeps(),
          revive: (init: RunRevival) => new LiveRun({ ...init, log, hooks, feed: run.feed }),
        },
        usage,
      ),
    replace(runId, outcome) {
      if (outcome?.kind === "live") runs.set(runId, outcome.run);
      // Settled, drifted or faulted: its blob is in the store, read back when asked.
      else runs.delete(runId);
    },
  });
  const liveRegistration = (iid: string, caller: Caller): Registration => {
    if (stopping) throw new Jr2Error("JR2_ERR_SERVICE_STOPPING");
    const registration = registrations.get(iid);
    if (!registration || !mayReach(caller, registration.scope))
      throw new Jr2Error("JR2_ERR_TURN_NOT_FOUND", { iid });
    return registration;
  };
  const allowedOf = (registration: Registration): string[] =>
    registrations.get(registration.iid) === registration ? readAllowedPicks(registration.turnActor) : [];

  const startTurn = (run: LiveRun, turn: TurnStart) =>
    registerTurn(
      {
        registrations,
        turnDriver,
        log,
        allowedOf,
        // Stored answers carry their scope (§4.4): nothing per iid is kept after its Turn.
        rememberScope: () => {},
        save: (r) => saveOrStop(r),
        recordUsage: (r, record) => persistence.recordUsage(r, record),
        // A frozen run's Turns stop as at shutdown: no Harness effect leaves (ADR-0253).
        shuttingDown: () => stopping || run.frozen,
        afterCommit: (r, fn) => persistence.afterCommit(r, fn),
        ...(options.placement
          ? {
              place: (runId: string, statePath: string, turn: TurnStart) =>
                placeTurn(options.placement!, runId, statePath, turn),
            }
          : {}),
      },
      run,
      turn,
    );

  const hooks = {
    startTurn,
    settled: (run: LiveRun) => announceGates(run),
    changed: (run: LiveRun) => {
      persistence.changed(run);
      evictWhenSaved(run);
    },
    now,
  };

  /** After each settled burst: a `gate` feed event for each Gate that opened or whose acceptsNow changed. */
  function announceGates(run: LiveRun): void {
    if (run.status !== "running") return;
    for (const gate of run.gates.values()) {
      const reading = gateOf(gate.actor);
      const key = JSON.stringify(reading.acceptsNow);
      if (gate.announced === key) continue;
      gate.announced = key;
      run.feed.append({ type: "gate", gate: reading });
    }
  }

  async function decideAndDeliver(registration: Registration, pick: PickRequest): Promise<PickAnswer> {
    const run = liveRunOfTurn(registration);
    const decision = decidePick(registration.turnActor, { name: pick.name, arguments: pick.arguments });
    if (decision.action === "answer") {
      return {
        delivered: false,
        ...(decision.moved === undefined ? {} : { moved: decision.moved }),
        turnComplete: registrations.get(registration.iid) !== registration,
        allowed: allowedOf(registration),
        ...(decision.refusal ? { refusal: decision.refusal } : {}),
        ...(decision.issues ? { issues: decision.issues } : {}),
      };
    }
    decision.target.send(decision.event);
    await run.settle();
    return {
      delivered: true,
      moved: decision.moved,
      turnComplete: registrations.get(registration.iid) !== registration,
      allowed: allowedOf(registration),
    };
  }

  const host: RunHost = {
    registrations,

    storeHealth() {
      const state = persistence.storeState();
      const failing = state.failing || frozenRuns.size > 0;
      return {
        store: failing ? "failing" : "ok",
        frozenRuns: frozenRuns.size,
        ...(state.error === undefined ? {} : { error: state.error }),
      };
    },

    listWorkflows: () =>
      [...infos].map(([name, info]) => ({
        name,
        input: (info.inputJsonSchema as Record<string, unknown> | null) ?? null,
        machines: info.machines.map((m) => ({
          path: m.path,
          agents: Object.keys(machineInfoOf(m.machine).agents),
        })),
      })),

    workflowMenu(name) {
      const info = workflowInfo(name);
      return {
        machines: info.machines.map(({ path, machine }) => {
          const agents = machineInfoOf(machine).agents;
          return {
            path,
            agents: Object.fromEntries(
              Object.entries(agents).map(([agent, a]) => [agent, { menu: a.menu, states: a.states }]),
            ),
          };
        }),
      };
    },

    async startRun(workflow, input) {
      const info = workflowInfo(workflow);
      let parsedInput = input;
      if (info.inputSchema) {
        // Strict: a typo (`taks`) must not start a run with the default task.
        const parsed = parseStrict(info.inputSchema, input ?? {});
        if (!parsed.ok) {
          const { issues } = parsed;
          const detail = issues.map((i) => `${i.path.join(".") || "(input)"}: ${i.message}`).join("; ");
          throw new Jr2Error("JR2_ERR_RUN_INPUT_INVALID", { workflow, detail, issues });
        }
        parsedInput = parsed.data;
      }
      const runId = mintRunId();
      if (stopping) throw new Jr2Error("JR2_ERR_SERVICE_STOPPING");
      const run = new LiveRun({
        runId,
        workflow,
        machine: options.workflows.get(workflow)!,
        input: parsedInput,
        fingerprint: info.fingerprint,
        log,
        hooks,
      });
      runs.set(runId, run);
      log.info({ runId, workflow }, "run started");
      run.start();
      await run.settle();
      await saveOrStop(run);
      return { runId };
    },

    async getRun(runId) {
      const run = runs.get(runId);
      if (run) return runDetailOf(run, registrations.ofRun(runId));
      const blob = await storedBlob(runId);
      // Left memory while the store was read: memory has the newer view.
      const since = runs.get(runId);
      if (since) return runDetailOf(since, registrations.ofRun(runId));
      // Totals from the recorded rows: usage read after the last save counts too (ADR-0255).
      const usage = damaged.has(runId) ? [] : await store.usage(runId);
      return storedRunDetail(usage.length > 0 ? { ...blob, usage: sumUsage(usage) } : blob);
    },

    async listRuns(status) {
      const listed = await store.list(status === undefined ? undefined : { status });
      // A run in memory answers as memory has it now (its blob may lag by one save).
      const summaries = new Map<string, RunSummary>(listed.map((s) => [s.runId, { ...s }]));
      // A damaged row lists as the faulted run it is served as, whatever its status column says.
      for (const blob of damaged.values()) {
        if (status === undefined || status === blob.status) summaries.set(blob.runId, storedRunSummary(blob));
        else summaries.delete(blob.runId);
      }
      for (const run of runs.values()) {
        if (status === undefined || run.status === status) summaries.set(run.runId, runSummaryOf(run));
        else summaries.delete(run.runId);
      }
      return [...summaries.values()].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
    },

    async feedOf(runId) {
      const run = runs.get(runId);
      if (run) return run.feed;
      const blob = await storedBlob(runId);
      return runs.get(runId)?.feed ?? settledRunFeed(blob, now, settledFeeds.get(runId));
    },

    isLive: (runId) => runs.get(runId)?.status === "running",

    resident: () => ({ runs: runs.size, settledFeeds: settledFeeds.size }),

    readSurface(iid, caller) {
      frozenRuns.refuseIfFrozen(iid.split("/", 1)[0] ?? iid);
      const registration = liveRegistration(iid, caller);
      return {
        iid,
        runId: registration.runId,
        agent: registration.agent,
        turnId: registration.turnId,
        menu: [...registration.menu],
        allowed: allowedOf(registration),
      };
    },

    async deliverPick(iid, caller, pick) {
      if (stopping) throw new Jr2Error("JR2_ERR_SERVICE_STOPPING");
      // iids are minted under their run id (§5.3): `<runId>/…`.
      const runId = iid.split("/", 1)[0] ?? iid;
      return serialized(runId, async () => {
        // Check 0 per Turn (ADR-0252): a continued conversation's next Turn may reuse a toolCallId.
        const { toolCallId, turnId } = pick;
        // A store that cannot be read (an I/O error) answers 503 like one that cannot be written.
        const known = await persistence
          .pickAnswer(runId, { iid, toolCallId, ...(turnId ? { turnId } : {}) })
          .catch((error: unknown) => {
            log.error({ runId, iid, err: error }, "reading the stored answer failed");
            throw storeFailing(error instanceof Error ? error.message : String(error), { runId });
          });
        if (known && mayReach(caller, known.scope)) {
          log.info(
            { runId, iid, turnId: known.turnId, pick: pick.name, toolCallId },
            "pick repeated: the stored answer",
          );
          return known.answer;
        }
        // A frozen run takes no pick: the Harness re-sends it once the run is reloaded.
        frozenRuns.refuseIfFrozen(runId);
        const registration = liveRegistration(iid, caller);
        if (turnId !== undefined && turnId !== registration.turnId) {
          // A pick of an ended Turn: never delivered into the Turn that now holds the iid.
          log.info(
            { runId, iid, turnId, liveTurnId: registration.turnId, pick: pick.name, toolCallId },
            "pick of an ended Turn: 404",
          );
          throw new Jr2Error("JR2_ERR_TURN_NOT_FOUND", { iid });
        }
        const run = liveRunOfTurn(registration);
        // The pick's effect is committed only with its answer, and answered only after (§4.3).
        const release = persistence.hold(run);
        // The feed shows the pick before the states and status it caused.
        const releaseFeed = run.feed.hold();
        let answer: PickAnswer | undefined;
        let saved = false;
        try {
          try {
            answer = await decideAndDeliver(registration, pick);
          } finally {
            release();
          }
          await saveOrStop(run, [
            { iid, turnId: registration.turnId, toolCallId, scope: registration.scope, answer },
          ]);
          saved = true;
          recordPickAnswer(registration, pick.name, answer);
        } finally {
          releaseFeed(
            answer === undefined || !saved
              ? []
              : [
                  {
                    type: "pick",
                    child: `${registration.statePath}#${registration.agent}`,
                    agent: registration.agent,
                    name: pick.name,
                    answer,
                  },
                ],
          );
        }
        log.info(
          {
            runId: registration.runId,
            agent: registration.agent,
            iid,
            turnId: registration.turnId,
            pick: pick.name,
            toolCallId,
            delivered: answer.delivered,
            moved: answer.moved,
          },
          "pick answered",
        );
        // Committed and logged, not yet told: the Harness re-sends, and gets the stored answer.
        crashPoint("pick-delivered");
        return answer;
      });
    },

    async listGates(runId) {
      const run = runs.get(runId);
      if (run) return [...run.gates.values()].map((gate) => gateOf(gate.actor));
      await storedBlob(runId);
      return [];
    },

    sendGateEvent: (runId, gateId, body) =>
      serialized(runId, async () => {
        frozenRuns.refuseIfFrozen(runId);
        const run = await runOf(runId);
        if (run.status !== "running")
          throw new Jr2Error("JR2_ERR_RUN_NOT_LIVE", { runId, status: run.status });
        const gate = run.gates.get(gateId);
        if (!gate)
          throw new Jr2Error("JR2_ERR_GATE_NOT_FOUND", { runId, gateId, open: [...run.gates.keys()] });
        const decision = decideGateEvent(gate.actor, body);
        if (decision.action === "refuse")
          throw new Jr2Error(decision.code, { runId, gateId, type: body.type, ...decision.fields });
        decision.target.send(decision.event);
        await run.settle();
        await saveOrStop(run);
        log.info({ runId, gate: gateId, type: body.type }, "Gate event delivered");
        return { moved: true as const };
      }),

    async cancelRun(runId) {
      frozenRuns.refuseIfFrozen(runId);
      const run = await runOf(runId);
      if (run.status !== "running") throw new Jr2Error("JR2_ERR_RUN_NOT_LIVE", { runId, status: run.status });
      run.cancel();
      await run.settle();
      await saveOrStop(run);
      log.info({ runId }, "run cancelled");
      return { runId, status: run.status };
    },

    async restore() {
      // Settled and drifted runs stay in the store: read back when asked (ADR-0260). A run
      // whose row cannot be decoded is kept here, served as faulted (ADR-0254).
      const { live, stored: blobs, report } = await restoreRuns(restoreDeps());
      const damagedIds = new Set(report.damaged.map((d) => d.runId));
      for (const blob of blobs) if (damagedIds.has(blob.runId)) damaged.set(blob.runId, blob);
      for (const run of live) runs.set(run.runId, run);
      // A run that settled while it was being restored leaves memory too.
      for (const run of live) evictWhenSaved(run);
      return report;
    },

    async close() {
      if (stopping) return;
      stopping = true;
      frozenRuns.close();
      drains.abort();
      // Commit what is pending, then stop without saving: the stop is not the run's state.
      await persistence.close();
      for (const run of runs.values()) run.actor.stop();
      await Promise.all([...runs.values()].map((run) => run.settle()));
      await store.close();
    },
  };
  return host;
}
