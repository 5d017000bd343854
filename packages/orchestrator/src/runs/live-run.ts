import type { RunFaultRecord, RunFeedEvent, RunOutcome, RunStatus } from "@jr2/wire";
import type { Logger } from "pino";
import {
  type AnyActorRef,
  type AnyStateMachine,
  createActor,
  type InspectionEvent,
  type Snapshot,
} from "xstate";
import type { OwedAbort } from "../durability/owed-aborts.js";
import type { RepoSlotRecord } from "../durability/store/run-blob.js";
import type { TurnRecord } from "../durability/transcript-rows.js";
import type { UsageRecord } from "../durability/usage-totals.js";
import { turnSeatOf } from "../menu/menu.js";
import { ConversationHistories } from "../turns/conversation-history.js";
import type { TurnLedgerEntry } from "../turns/turn-driver.js";
import {
  bindRun,
  type PublishReposRequest,
  type RepoSlotHandle,
  type RepoSlotsRequest,
  type RunBinding,
  type TurnStart,
} from "../xstate/run-binding.js";
import { createRunFeed, type RunFeed } from "./feed.js";
import { type MachineDigests, machineDigestsOf } from "./machine-digests.js";
import { type OpenGate, openGate } from "./open-gates.js";
import { RunChanges } from "./run-changes.js";
import { errorText, type RunFault, unroutedFault } from "./run-faults.js";
import { faultRecordOf, outcomeOf, type TurnPlace } from "./run-outcome.js";
import { type FiringTimers, timerEntryOf } from "./timer-events.js";

export type { OpenGate } from "./open-gates.js";

/** What a run needs from its host: the Turn mechanics and the clock. */
export interface LiveRunHooks {
  /** Registers the Turn and starts its driver; returns the stop function (§5.1). */
  startTurn(run: LiveRun, turn: TurnStart): () => void;
  /** Called once per settled burst of changes (after the mailboxes drained). */
  settled(run: LiveRun): void;
  /** Called at the end of each macrostep of any actor of the run and on each status change (the save, §8). */
  changed?(run: LiveRun): void;
  /** Each numbered feed event of the run (its durable log, ADR-0256). */
  recorded?(run: LiveRun, event: RunFeedEvent): void;
  /** Attaches a workspace's Repo Slots on its Harness (issue 28); absent: such a workspace faults. */
  attachRepos?(run: LiveRun, request: RepoSlotsRequest): Promise<Record<string, RepoSlotHandle>>;
  /** Pushes a workspace's slots' branches (publish, issue 28 §5). */
  publishRepos?(run: LiveRun, request: PublishReposRequest): Promise<void>;
  now(): Date;
}

/**
 * One run: its root actor, the binding its actors find through `system`, its feed, open
 * Gates, ledger and epochs, and its status. Watches every actor of the run through
 * `system.inspect` (picks land in child Machines, e.g. a `workspace()` body), so the status
 * feed and the "settled" notifications see every change. Its Gates open through
 * `open-gates.ts`, its settle and watch mechanics are `run-changes.ts`, what faults it is
 * `run-faults.ts`; it satisfies `SavedRun`/`RestorableRun` (durability/saved-run.ts).
 * @see SPEC §4.1, §5.6 (an unrouted `agent.fault` faults the run), §8
 */
export class LiveRun {
  readonly runId: string;
  readonly workflow: string;
  readonly feed: RunFeed;
  readonly actor: AnyActorRef;
  readonly gates = new Map<string, OpenGate>();
  readonly ledger = new Map<string, TurnLedgerEntry>();
  readonly epochs = new Map<string, number>();
  /**
   * The run's recorded model requests by {@link usageKey} (ADR-0255): loaded from the store on
   * restore, each new one also written to it. The run's totals are summed from these.
   */
  readonly usage = new Map<string, UsageRecord>();
  /**
   * The aborts the run owes by iid (ADR-0280): a Turn whose state exited owes its Submission's
   * abort; saved with that state, dropped once acknowledged or once its iid is admitted again.
   */
  readonly owedAborts = new Map<string, OwedAbort>();
  /** `<submissionId>@<position>` of each model-request retry told on the feed (issue 22 §5). */
  readonly retryKeys = new Set<string>();
  /**
   * The pick being delivered now (set while its event is sent and the run settles): a publish it
   * causes names it, though its feed event is written only after (ADR-0226). Not saved.
   */
  pickInDelivery: { child: string; agent: string; name: string; arguments?: unknown } | undefined;
  /** The run's Repo Slots by `<workspace>/<slot>` (issue 28), as attached. */
  readonly repoSlots = new Map<string, RepoSlotRecord>();
  /** The newest Worktree commit per slot, from the picks (issue 28 §3). */
  readonly repoCommits = new Map<string, string>();
  /** Keys of the run's recorded transcript rows (ADR-0257): loaded on restore, so a re-read adds nothing. */
  readonly transcriptKeys = new Set<string>();
  /**
   * Its conversations' byte-exact history (issue 27): in memory until the run leaves it, stored
   * beside the transcript until it settles (ADR-0176), reloaded on restore and adoption.
   */
  readonly histories = new ConversationHistories();
  /**
   * The Turn of each Submission this run ledgered (submissionId → turnId): a Submission's late
   * entries, read by the next Turn on its conversation, are still its own Turn's (ADR-0257).
   */
  readonly submissionTurns = new Map<string, string>();
  /** The run's Turn records by turnId (ADR-0257): loaded on restore, written to the store as they change. */
  readonly turns = new Map<string, TurnRecord>();
  /** The turnIds whose registration is committed (ADR-0296): the others' records wait for a save. */
  readonly committedTurns = new Set<string>();
  /** The validated run input (saved in the RunBlob). */
  readonly input: unknown;
  /** The Machine's fingerprint when the run started (§8). */
  readonly fingerprint: string;
  /** Every Machine's fingerprint and Agent's Menu digest of the Machine it runs (ADR-0271). */
  readonly digests: MachineDigests;
  readonly createdAt: Date;
  /**
   * A foreground save of the run failed (ADR-0253): its actors are stopped, it takes nothing and
   * is never saved from memory; it is reloaded from its last committed save.
   */
  frozen = false;
  /**
   * This instance let go of the run (ADR-0280 "Letting go"): its lease moved to another
   * instance. Set together with `frozen` (nothing more is saved or told from memory); its
   * Turns stopped as at shutdown, it left memory.
   */
  movedAway = false;
  /**
   * Ends each live Turn of this incarnation as at shutdown (ADR-0283): a let-go calls them all,
   * so none stays registered or reading after the run left this process.
   */
  readonly turnEnds = new Set<() => void>();
  /** Aborted when the run is let go (ADR-0283): its restore drains stop reading the Harness. */
  readonly readers = new AbortController();
  /** A Gate opened since the last committed save (the `gate-open` crash point). */
  gatesUnsaved = false;
  status: RunStatus = "running";
  /** Why the run faulted; `detail` and `cause` are what a Turn fault carried (§5.6). */
  fault: RunFault | undefined;
  /** How the run ended, set once when it settles (ADR-0062); undefined while running. */
  outcome: RunOutcome | undefined;
  /** Every `agent.fault` of the run, routed or not, in arrival order (restored with the run). */
  readonly faults: RunFaultRecord[] = [];
  updatedAt: Date;
  readonly #hooks: LiveRunHooks;
  readonly #log: Logger;
  readonly #changes: RunChanges;
  readonly #machine: AnyStateMachine;
  /** iid → where its Turn ran, for the fault records. */
  readonly #places = new Map<string, TurnPlace>();
  #lastValue = "";
  readonly #firingTimers: FiringTimers = new Map();

  constructor(options: {
    runId: string;
    workflow: string;
    machine: AnyStateMachine;
    input: unknown;
    fingerprint: string;
    hooks: LiveRunHooks;
    log: Logger;
    /** Restore (§8): the persisted snapshot to recreate the run from, instead of starting it fresh. */
    snapshot?: unknown;
    createdAt?: Date;
    /** The feed to go on with (a frozen run reloaded keeps its followers); default a new one. */
    feed?: RunFeed;
    /** A new feed's first seq: a restored run goes on after its stored log (ADR-0256). Default 0. */
    nextSeq?: number;
  }) {
    this.runId = options.runId;
    this.workflow = options.workflow;
    this.input = options.input;
    this.fingerprint = options.fingerprint;
    this.digests = machineDigestsOf(options.machine);
    this.#hooks = options.hooks;
    this.#machine = options.machine;
    this.#log = options.log;
    this.updatedAt = options.hooks.now();
    this.createdAt = options.createdAt ?? this.updatedAt;
    const sink = (event: RunFeedEvent) => this.#hooks.recorded?.(this, event);
    this.feed = options.feed ?? createRunFeed(options.hooks.now, { nextSeq: options.nextSeq ?? 0 });
    this.feed.record(sink);
    this.#changes = new RunChanges(this.runId, this.#log, () => this.#hooks.settled(this));
    const binding = this.#binding();
    let bound = false;
    this.actor = createActor(options.machine, {
      // Restored children restart with their persisted input; the mapper is not re-run (§13).
      ...(options.snapshot === undefined
        ? { input: options.input }
        : { snapshot: options.snapshot as Snapshot<unknown> }),
      // The root's first inspection event fires before it computes its initial state, so the
      // binding is in place before any input mapper mints an iid under this run id.
      inspect: (event) => {
        if (!bound) {
          bindRun((event.actorRef as AnyActorRef).system, binding);
          bound = true;
        }
        this.#onInspect(event);
      },
    });
    // Without an error observer xstate rethrows a Machine's error on a timer: the process dies.
    this.actor.subscribe({ error: (error) => this.faultRun(errorText(error)) });
  }

  /** Starts the root actor. */
  start(): void {
    this.actor.start();
  }

  /** Counts changes seen so far (any actor of the run). */
  get changes(): number {
    return this.#changes.count;
  }

  /**
   * Resolves once no actor of the run changed during a full event-loop turn: every mailbox
   * drained and the promise/callback work it triggered ran. No sleeps; bounded rounds.
   */
  settle(): Promise<void> {
    return this.#changes.settle();
  }

  /** Calls `onChange` after each settled burst of changes; returns the unsubscribe function. */
  watch(onChange: () => void): () => void {
    return this.#changes.watch(onChange);
  }

  /**
   * Ends the run as `faulted` with `reason` (recorded, on the feed) and stops its actors.
   * @param detail - the words, when a Turn fault faulted the run (kept in `fault.detail`)
   * @param cause - the Turn fault's cause (a FaultCause string, kept in `fault.cause`)
   */
  faultRun(reason: string, detail?: string, cause?: string): void {
    if (this.status !== "running") return;
    this.fault = {
      reason,
      ...(detail === undefined ? {} : { detail }),
      ...(cause === undefined ? {} : { cause }),
    };
    this.#setStatus("faulted", reason);
    this.#log.warn({ runId: this.runId, reason, ...(detail === undefined ? {} : { detail }) }, "run faulted");
    // Never stop an actor from inside its own processing; an errored actor's stop may throw.
    setImmediate(() => {
      try {
        this.actor.stop();
      } catch (error) {
        this.#log.error({ runId: this.runId, err: error }, "stopping the faulted run threw");
      }
    });
  }

  /** Ends the run as `cancelled` and stops its actors (the Turns end: deregistered, aborted). */
  cancel(): void {
    if (this.status !== "running") return;
    this.#setStatus("cancelled");
    this.actor.stop();
  }

  #binding(): RunBinding {
    return {
      runId: this.runId,
      epochOf: (address) => this.epochs.get(address) ?? 0,
      startTurn: (turn) => {
        const { agentName: agent, iid, turnId } = turn.input;
        this.#places.set(iid, { agent, state: turnSeatOf(turn.self)?.seat.statePath ?? "", turnId });
        return this.#hooks.startTurn(this, turn);
      },
      openGate: (gate) => openGate(this, gate, this.#log),
      ...(this.#hooks.attachRepos
        ? {
            attachRepos: (request: RepoSlotsRequest) =>
              this.#hooks.attachRepos?.(this, request) ?? Promise.resolve({}),
          }
        : {}),
      ...(this.#hooks.publishRepos
        ? {
            publishRepos: (request: PublishReposRequest) =>
              this.#hooks.publishRepos?.(this, request) ?? Promise.resolve(),
          }
        : {}),
    };
  }

  /** Every inspection event of any actor of the run: a change, maybe a fault or a new status. */
  #onInspect(event: InspectionEvent): void {
    this.#changes.seen();
    this.updatedAt = this.#hooks.now();
    if (event.type === "@xstate.event" && event.event.type === "agent.fault") {
      // An `agent.fault` that no transition of its target takes faults the run (§5.6).
      const fault = unroutedFault(event);
      this.#recordFault(event.event, fault === undefined);
      if (fault) this.faultRun(fault.reason, fault.detail, fault.cause);
    }
    const timer = timerEntryOf(this.#firingTimers, event);
    if (timer && this.status === "running") this.feed.append(timer);
    if (event.type === "@xstate.snapshot" && event.actorRef === this.actor) this.#onRootSnapshot(event);
    if (event.type === "@xstate.snapshot") this.#hooks.changed?.(this);
    this.#changes.notifyWhenDrained();
  }

  #onRootSnapshot(event: Extract<InspectionEvent, { type: "@xstate.snapshot" }>): void {
    const snapshot = event.snapshot as { status?: string; value?: unknown; error?: unknown };
    if (snapshot.status === "done") this.#setStatus("done");
    else if (snapshot.status === "error") this.faultRun(errorText(snapshot.error));
    const value = JSON.stringify(snapshot.value ?? null);
    if (value !== this.#lastValue && this.status === "running") {
      this.#lastValue = value;
      this.feed.append({ type: "status", status: this.status, value: snapshot.value ?? null });
    }
  }

  #recordFault(event: object, routed: boolean): void {
    if (this.status !== "running") return;
    const ledgerTurnId = (iid: string) => this.ledger.get(iid)?.turnId;
    this.faults.push(faultRecordOf(event, routed, this.#places, ledgerTurnId, this.#hooks.now()));
  }

  #setStatus(status: RunStatus, reason?: string): void {
    if (this.status === status) return;
    const value = (this.actor?.getSnapshot() as { value?: unknown } | undefined)?.value ?? null;
    // Once, before the save `changed` triggers: the outcome is saved with the settled status.
    this.outcome ??= outcomeOf(status, this.#machine, value);
    this.status = status;
    this.#hooks.changed?.(this);
    const outcome = this.outcome;
    this.feed.append({
      type: "status",
      status,
      value,
      ...(reason === undefined ? {} : { reason }),
      ...(outcome === undefined ? {} : { outcome }),
    });
  }
}
