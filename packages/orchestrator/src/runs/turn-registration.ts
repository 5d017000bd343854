/**
 * A Turn's registration (docs/reference/lifecycle.md "A Turn's registration"): place → refuse
 * unplaced → register → refuse a conflicting iid → start the driver after commit → stop. About
 * 300 lines on purpose: the phases and the Turn driver's context they build read in order in
 * one file; what the Turn tells the run's feed (usage, transcripts, retries) is turn-telemetry.ts.
 */
import { randomBytes } from "node:crypto";
import type { PickAnswer } from "@jr2/wire";
import type { Logger } from "pino";
import type { AnyActorRef } from "xstate";
import type { OwedAbort } from "../durability/owed-aborts.js";
import type { TranscriptRow } from "../durability/transcript-rows.js";
import type { UsageRecord } from "../durability/usage-totals.js";
import { menuOfTurn, turnSeatOf } from "../menu/menu.js";
import { isAtRest } from "../menu/rest.js";
import type { Placement } from "../turns/placement.js";
import { INSTANCE_SCOPE, type Registration, type RegistrationTable } from "../turns/registration-table.js";
import type { TurnContext, TurnDriver } from "../turns/turn-driver.js";
import { actorPathOf, parentOf } from "../xstate/adapter.js";
import type { TurnStart } from "../xstate/run-binding.js";
import { type HistoryDeps, historyPorts } from "./history-ports.js";
import type { LiveRun } from "./live-run.js";
import { sendFault } from "./turn-fault.js";
import {
  type RecordTurn,
  turnEnded,
  turnFaulted,
  turnMoved,
  turnPicked,
  turnRefused,
  turnStarted,
} from "./turn-records.js";
import { type TurnSeat, turnTelemetry } from "./turn-telemetry.js";

/** The newest pick answer of each Turn, by its Turn actor (a Turn keeps it across a reseat). */
const lastAnswers = new WeakMap<AnyActorRef, { pick: string; answer: PickAnswer }>();

/** Records the answer a pick of the Turn at `registration` got (the run host calls it, §4.3). */
export function recordPickAnswer(
  registration: Registration,
  pick: string,
  answer: PickAnswer,
  args?: unknown,
): void {
  if (!answer.delivered) return;
  lastAnswers.set(registration.turnActor, { pick, answer });
  turnPicked(registration.turnActor, pick, args, answer.moved);
}

/** What registering a Turn needs from its host. */
export interface TurnRegistrationDeps extends HistoryDeps {
  registrations: RegistrationTable;
  turnDriver: TurnDriver;
  log: Logger;
  /** The Allowed picks of a registration now (`[]` once it is not the live one). */
  allowedOf(registration: Registration): string[];
  /** Records the scope of an iid for the life of the host (stored answers, ADR-0051). */
  rememberScope(iid: string, scope: string): void;
  /** Placement (§5.2); absent: every Turn is played by hand in the instance scope. */
  place?(runId: string, statePath: string, turn: TurnStart): Placement;
  /** Saves the run's RunBlob now; resolves after the commit (a ledger write, §5.4, §8). */
  save?(run: LiveRun): Promise<void>;
  /** Records a usage record once by its key; false when already recorded (ADR-0255). */
  recordUsage?(run: LiveRun, record: UsageRecord): boolean;
  /** Records a transcript row once by its key; false when already recorded (ADR-0257). */
  recordTranscript?(run: LiveRun, row: TranscriptRow): boolean;
  /** Writes a Turn record (ADR-0257); absent: Turns are not recorded. */
  recordTurn?: RecordTurn;
  /** Is the host shutting down (Turns stop leaving their Submissions running, §5.1)? */
  shuttingDown?(): boolean;
  /** Runs `fn` once the run's next save (of its current state) committed; absent: at once. */
  afterCommit?(run: LiveRun, fn: () => void): void;
  /**
   * Does this instance still hold the run's lease (ADR-0280)? Checked before every Harness call;
   * false lets the run go. Absent: always (an embedded store).
   */
  holdsLease?(run: LiveRun): boolean | Promise<boolean>;
  /** This instance's id on a shared store (`x-jr2-instance` on its Harness calls); absent: none. */
  instanceId?: string;
}

/**
 * The run binding's `startTurn` (§5.1): registers the Turn's surface (one live surface per
 * address, §5.3), hands it to the Turn driver once the next save committed (ADR-0250), and
 * returns the stop the Agent slot calls when its state exits — deregistration of this very
 * registration, then the driver's stop after the next commit (at once on shutdown).
 * A second live registration of one iid is refused: that invocation gets
 * `agent.fault { reason: "conflict", detail }` naming both states. Never throws.
 * @see SPEC §4.3 (turnComplete by identity), §4.4 (scope), §5.1, §5.3; ADR-0050, ADR-0051
 */
export function registerTurn(deps: TurnRegistrationDeps, run: LiveRun, turn: TurnStart): () => void {
  const seat = seatOf(deps, run, turn);
  const placement = placeTurn(deps, run, turn, seat);
  if (placement.kind === "unplaced") {
    turnRefused(run, recordSeat(seat, turn, turn.input.iid), deps.recordTurn, {
      reason: "placement",
      detail: placement.reason,
    });
    return refuseUnplaced(run, turn, seat, placement.reason);
  }
  const live: LiveTurn = {
    current: registrationAt(run, turn, seat, placement, turn.input.iid),
    ended: false,
    stopDriver: () => {},
  };
  const first = deps.registrations.register(live.current);
  if (!first.ok) {
    turnRefused(run, recordSeat(seat, turn, live.current.iid), deps.recordTurn, {
      reason: "conflict",
      detail: first.reason,
    });
    return refuseConflict(run, turn, seat, live.current.iid, first.reason);
  }
  deps.rememberScope(live.current.iid, live.current.scope);
  seat.log.info({ iid: live.current.iid, turnId: live.current.turnId }, "Turn registered");
  turnStarted(run, turn.self, recordSeat(seat, turn, live.current.iid), deps.recordTurn);
  startDriverAfterCommit(deps, run, seat, live, turnContext(deps, run, turn, seat, placement, live));
  // Once: the Agent slot's stop, or a let-go's teardown of the run (ADR-0283), whichever comes first.
  const end = () => {
    run.turnEnds.delete(end);
    if (!live.ended) endTurn(deps, run, seat, live);
  };
  run.turnEnds.add(end);
  // Registered by a stop xstate deferred past the let-go's teardown: ended at once.
  if (run.movedAway) end();
  return end;
}

/** The seat a Turn record names. */
function recordSeat(seat: TurnSeat, turn: TurnStart, iid: string) {
  return { turnId: turn.input.turnId, agent: seat.agent, state: seat.statePath, iid };
}

/** A registered Turn's mutable state: its live registration (a reseat moves it), its driver's stop. */
interface LiveTurn {
  current: Registration;
  /** The abort this Turn's end owes (ADR-0280), until the Harness acknowledges it. */
  owed?: OwedAbort;
  /** The Agent slot stopped: a driver start still waiting on a commit does nothing. */
  ended: boolean;
  stopDriver: () => void;
}

/** The Turn's seat: its state path, Agent name, feed child and a log bound to them. */
function seatOf(deps: TurnRegistrationDeps, run: LiveRun, turn: TurnStart): TurnSeat {
  const statePath = turnSeatOf(turn.self)?.seat.statePath ?? "";
  const agent = turn.input.agentName;
  const log = deps.log.child({ runId: run.runId, agent, state: statePath });
  return { statePath, agent, child: `${statePath}#${agent}`, log };
}

/** Phase 1: placement (§5.2); without a placer every Turn is played by hand in the instance scope. */
function placeTurn(deps: TurnRegistrationDeps, run: LiveRun, turn: TurnStart, seat: TurnSeat): Placement {
  return (
    deps.place?.(run.runId, seat.statePath, turn) ?? {
      kind: "placed",
      harnessUrl: "",
      scope: turn.input.sandbox ?? INSTANCE_SCOPE,
    }
  );
}

/** Phase 1 refused: fail loudly (§5.2) — the workflow routes the fault; nothing is registered. */
function refuseUnplaced(run: LiveRun, turn: TurnStart, seat: TurnSeat, reason: string): () => void {
  seat.log.warn({ code: "placement" }, reason);
  run.feed.append({ type: "fault", child: seat.child, reason: "placement", detail: reason });
  sendFault(turn, seat, turn.input.iid, "placement", reason);
  return () => {};
}

/** Phase 2 refused: a second live registration of one iid (§5.3); the live one keeps the surface. */
function refuseConflict(
  run: LiveRun,
  turn: TurnStart,
  seat: TurnSeat,
  iid: string,
  reason: string,
): () => void {
  seat.log.warn({ code: "conflict" }, reason);
  run.feed.append({ type: "fault", child: seat.child, reason: "conflict", detail: reason });
  sendFault(turn, seat, iid, "conflict", reason);
  return () => {};
}

/** The Turn's registration at `iid` (a fresh object each time: turnComplete goes by identity, §4.3). */
function registrationAt(
  run: LiveRun,
  turn: TurnStart,
  seat: TurnSeat,
  placement: Extract<Placement, { kind: "placed" }>,
  iid: string,
): Registration {
  return {
    iid,
    runId: run.runId,
    agent: seat.agent,
    turnId: turn.input.turnId,
    scope: placement.scope,
    ...(placement.harnessUrl ? { harnessUrl: placement.harnessUrl } : {}),
    ...(placement.cwd ? { cwd: placement.cwd } : {}),
    ...(placement.network ? { network: placement.network } : {}),
    turnActor: turn.self,
    statePath: seat.statePath,
    menu: menuOfTurn(turn.self),
    input: turn.input,
    definition: turn.definition,
  };
}

/** The next epoch of a continued conversation's address (§5.3). */
function bumpEpoch(run: LiveRun, address: string): number {
  const next = (run.epochs.get(address) ?? 0) + 1;
  run.epochs.set(address, next);
  return next;
}

/** Phase 3: what the Turn driver sees of the registered Turn (reads the live registration each time). */
function turnContext(
  deps: TurnRegistrationDeps,
  run: LiveRun,
  turn: TurnStart,
  seat: TurnSeat,
  placement: Extract<Placement, { kind: "placed" }>,
  live: LiveTurn,
): TurnContext {
  const { registrations } = deps;
  const { child, log } = seat;
  return {
    runId: run.runId,
    get registration() {
      return live.current;
    },
    turn,
    allowed: () => deps.allowedOf(live.current),
    isOpen: () => registrations.get(live.current.iid) === live.current,
    atRest: () => isAtRest(live.current.turnActor),
    lastAnswer: () => lastAnswers.get(turn.self),
    watch: (onChange) => run.watch(onChange),
    ...turnTelemetry(deps, run, seat, () => live.current),
    fault: (reason, detail, cause) => {
      // A terminal fault on a continued conversation bumps its epoch: the next `continue`
      // lands on a new conversation (§5.3).
      if (turn.input.continuation) bumpEpoch(run, addressOf(run.runId, turn));
      turnFaulted(turn.self, {
        reason,
        ...(cause === undefined ? {} : { cause }),
        ...(detail === undefined ? {} : { detail }),
      });
      sendFault(turn, seat, live.current.iid, reason, detail, cause, placement.cwd);
    },
    recordCommits: (commits) => {
      for (const [key, commit] of Object.entries(commits)) run.repoCommits.set(key, commit);
    },
    ledgerRead: (iid) => run.ledger.get(iid),
    ledgerWrite: async (iid, entry) => {
      // Who each Submission belongs to, the one this entry replaces too (restored from the blob).
      for (const e of [run.ledger.get(iid), entry])
        if (e?.turnId && e.submissionId) run.submissionTurns.set(e.submissionId, e.turnId);
      // Where it was admitted: a restore reads the rest of an ended Turn's usage there (ADR-0255),
      // and puts it on the event log as this Turn's (ADR-0256).
      // A new admission on the iid: the abort it owed went out before it (its FIFO, §5.3).
      run.owedAborts.delete(iid);
      run.ledger.set(iid, {
        ...entry,
        ...(live.current.harnessUrl ? { harnessUrl: live.current.harnessUrl } : {}),
        child,
      });
      await deps.save?.(run);
    },
    shuttingDown: () => deps.shuttingDown?.() === true,
    abortAcknowledged: (iid) => {
      // Paid: dropped in memory, the run's next save carries that (ADR-0280).
      if (live.owed && run.owedAborts.get(iid) === live.owed) run.owedAborts.delete(iid);
    },
    holdsLease: () => deps.holdsLease?.(run) ?? true,
    ...(deps.instanceId === undefined ? {} : { instanceId: deps.instanceId }),
    bumpEpoch: (address) => bumpEpoch(run, address),
    reseat: () => reseat(deps, run, turn, seat, placement, live),
    // Kept in memory and stored (issue 27, ADR-0176); a fresh conversation's dropped at its end.
    ...historyPorts(deps, run, turn),
    log,
  };
}

/**
 * Moves the Turn onto a new conversation (a new iid: the next epoch when continued, else fresh)
 * and returns its iid; when the new iid cannot be registered, the Turn stays where it was.
 */
function reseat(
  deps: TurnRegistrationDeps,
  run: LiveRun,
  turn: TurnStart,
  seat: TurnSeat,
  placement: Extract<Placement, { kind: "placed" }>,
  live: LiveTurn,
): string {
  const address = addressOf(run.runId, turn);
  const iid = turn.input.continuation
    ? `${address}/${bumpEpoch(run, address)}`
    : `${address}/${randomBytes(4).toString("hex")}`;
  const next = registrationAt(run, turn, seat, placement, iid);
  const moved = deps.registrations.register(next);
  if (!moved.ok) return live.current.iid;
  deps.registrations.deregister(live.current);
  live.current = next;
  deps.rememberScope(iid, next.scope);
  turnMoved(turn.self, iid);
  seat.log.info({ turnId: next.turnId }, "Turn reseated on a new conversation");
  return iid;
}

/**
 * Phase 4, the outbox rule (ADR-0250): the driver's effects (an admission, a remote abort) leave
 * the process only once the state that caused them is committed; a crash before that restores a
 * run in which they never happened.
 */
function startDriverAfterCommit(
  deps: TurnRegistrationDeps,
  run: LiveRun,
  seat: TurnSeat,
  live: LiveTurn,
  context: TurnContext,
): void {
  const startDriver = () => {
    if (live.ended) return;
    try {
      live.stopDriver = deps.turnDriver.start(context);
    } catch (error) {
      seat.log.error({ err: error }, "the Turn driver threw on start; the Turn stays playable by hand");
    }
  };
  if (deps.afterCommit) deps.afterCommit(run, startDriver);
  else startDriver();
}

/** Phase 5 (the Agent slot stops): deregister this very registration, then the driver's stop after the next commit. */
function endTurn(deps: TurnRegistrationDeps, run: LiveRun, seat: TurnSeat, live: LiveTurn): void {
  live.ended = true;
  deps.registrations.deregister(live.current);
  seat.log.info({ turnId: live.current.turnId }, "Turn ended");
  // On shutdown the Turn is restored later: its record stays running.
  if (deps.shuttingDown?.() !== true) {
    turnEnded(live.current.turnActor);
    oweAbort(run, live);
  }
  const stop = () => stopDriver(seat, live);
  // A shutdown stops at once (no remote abort: the run stays restorable).
  if (deps.afterCommit && deps.shuttingDown?.() !== true) deps.afterCommit(run, stop);
  else stop();
}

/**
 * The ended Turn's Submission is owed an abort (ADR-0280): saved with the state that exited it,
 * so whoever restores that state sends it. Only for an admission at its iid on a Harness.
 */
function oweAbort(run: LiveRun, live: LiveTurn): void {
  const { iid } = live.current;
  const entry = run.ledger.get(iid);
  const harnessUrl = entry?.harnessUrl ?? live.current.harnessUrl;
  if (!entry || !harnessUrl) return;
  live.owed = { iid, submissionId: entry.submissionId, harnessUrl };
  run.owedAborts.set(iid, live.owed);
}

/** Calls the driver's stop; a throw is logged, never raised. */
function stopDriver(seat: TurnSeat, live: LiveTurn): void {
  try {
    live.stopDriver();
  } catch (error) {
    seat.log.error({ err: error }, "the Turn driver threw on stop");
  }
}

/** A continued conversation's address, `<runId>/<invoker's actor path>/<agent>`, as the mapper mints it (§5.3). */
function addressOf(runId: string, turn: TurnStart): string {
  const invoker = parentOf(turn.self);
  return [runId, invoker ? actorPathOf(invoker) : "", turn.input.agentName]
    .filter((p) => p.length > 0)
    .join("/");
}
