import { randomBytes } from "node:crypto";
import type { FaultCause, PickAnswer } from "@jr2/wire";
import type { Logger } from "pino";
import type { AnyActorRef, EventObject } from "xstate";
import type { UsageRecord } from "../durability/usage-totals.js";
import { menuOfTurn, turnSeatOf } from "../menu/menu.js";
import { isAtRest } from "../menu/rest.js";
import { type Sender, stampSender } from "../menu/sender.js";
import type { Placement } from "../turns/placement.js";
import { INSTANCE_SCOPE, type Registration, type RegistrationTable } from "../turns/registration-table.js";
import { type TurnContext, type TurnDriver, usageFeedEntry } from "../turns/turn-driver.js";
import { actorPathOf, parentOf } from "../xstate/adapter.js";
import type { TurnStart } from "../xstate/run-binding.js";
import type { LiveRun } from "./live-run.js";

/** The newest pick answer of each Turn, by its Turn actor (a Turn keeps it across a reseat). */
const lastAnswers = new WeakMap<AnyActorRef, { pick: string; answer: PickAnswer }>();

/** Records the answer a pick of the Turn at `registration` got (the run host calls it, §4.3). */
export function recordPickAnswer(registration: Registration, pick: string, answer: PickAnswer): void {
  if (answer.delivered) lastAnswers.set(registration.turnActor, { pick, answer });
}

/** What registering a Turn needs from its host. */
export interface TurnRegistrationDeps {
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
  /** Is the host shutting down (Turns stop leaving their Submissions running, §5.1)? */
  shuttingDown?(): boolean;
  /** Runs `fn` once the run's next save (of its current state) committed; absent: at once. */
  afterCommit?(run: LiveRun, fn: () => void): void;
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
  const { registrations } = deps;
  const statePath = turnSeatOf(turn.self)?.seat.statePath ?? "";
  const agent = turn.input.agentName;
  const child = `${statePath}#${agent}`;
  const log = deps.log.child({ runId: run.runId, agent, state: statePath });
  const placement: Placement = deps.place?.(run.runId, statePath, turn) ?? {
    kind: "placed",
    harnessUrl: "",
    scope: turn.input.sandbox ?? INSTANCE_SCOPE,
  };
  if (placement.kind === "unplaced") {
    // Fail loudly (§5.2): the workflow routes the fault; nothing is registered.
    log.warn({ code: "placement" }, placement.reason);
    run.feed.append({ type: "fault", child, reason: "placement", detail: placement.reason });
    turn.sendBack(
      stampSender(
        "agent.fault",
        { reason: "placement", detail: placement.reason },
        {
          kind: "agent",
          name: agent,
          iid: turn.input.iid,
        },
      ) as EventObject,
    );
    return () => {};
  }
  const registrationAt = (iid: string): Registration => ({
    iid,
    runId: run.runId,
    agent,
    turnId: turn.input.turnId,
    scope: placement.scope,
    ...(placement.harnessUrl ? { harnessUrl: placement.harnessUrl } : {}),
    ...(placement.cwd ? { cwd: placement.cwd } : {}),
    turnActor: turn.self,
    statePath,
    menu: menuOfTurn(turn.self),
    input: turn.input,
    definition: turn.definition,
  });
  const fault = (iid: string, reason: string, detail?: string, cause?: FaultCause) => {
    const sender: Sender = { kind: "agent", name: agent, iid };
    const payload = {
      reason,
      ...(detail === undefined ? {} : { detail }),
      ...(cause === undefined ? {} : { cause }),
    };
    turn.sendBack(stampSender("agent.fault", payload, sender) as EventObject);
  };

  let current = registrationAt(turn.input.iid);
  const first = registrations.register(current);
  if (!first.ok) {
    log.warn({ code: "conflict" }, first.reason);
    run.feed.append({ type: "fault", child, reason: "conflict", detail: first.reason });
    fault(current.iid, "conflict", first.reason);
    return () => {};
  }
  deps.rememberScope(current.iid, current.scope);
  log.info({ iid: current.iid, turnId: current.turnId }, "Turn registered");

  const bumpEpoch = (address: string): number => {
    const next = (run.epochs.get(address) ?? 0) + 1;
    run.epochs.set(address, next);
    return next;
  };
  const context: TurnContext = {
    runId: run.runId,
    get registration() {
      return current;
    },
    turn,
    allowed: () => deps.allowedOf(current),
    isOpen: () => registrations.get(current.iid) === current,
    atRest: () => isAtRest(current.turnActor),
    lastAnswer: () => lastAnswers.get(turn.self),
    watch: (onChange) => run.watch(onChange),
    telemetry: (event) => run.feed.append({ ...event, child } as never),
    recordUsage: (record) => {
      // Once per stream position (ADR-0255): a stream read again after a restart adds nothing.
      if (deps.recordUsage && !deps.recordUsage(run, record)) return;
      run.feed.append({ ...usageFeedEntry(record), child } as never);
    },
    fault: (reason, detail, cause) => {
      // A terminal fault on a continued conversation bumps its epoch: the next `continue`
      // lands on a new conversation (§5.3).
      if (turn.input.continuation) bumpEpoch(addressOf(run.runId, turn));
      fault(current.iid, reason, detail, cause);
    },
    ledgerRead: (iid) => run.ledger.get(iid),
    ledgerWrite: async (iid, entry) => {
      // Where it was admitted: a restore reads the rest of an ended Turn's usage there (ADR-0255),
      // and puts it on the event log as this Turn's (ADR-0256).
      run.ledger.set(iid, {
        ...entry,
        ...(current.harnessUrl ? { harnessUrl: current.harnessUrl } : {}),
        child,
      });
      await deps.save?.(run);
    },
    shuttingDown: () => deps.shuttingDown?.() === true,
    bumpEpoch,
    reseat() {
      const address = addressOf(run.runId, turn);
      const iid = turn.input.continuation
        ? `${address}/${bumpEpoch(address)}`
        : `${address}/${randomBytes(4).toString("hex")}`;
      const next = registrationAt(iid);
      const moved = registrations.register(next);
      if (!moved.ok) return current.iid;
      registrations.deregister(current);
      current = next;
      deps.rememberScope(iid, next.scope);
      log.info({ turnId: next.turnId }, "Turn reseated on a new conversation");
      return iid;
    },
    log,
  };
  // Outbox rule (ADR-0250): the driver's effects (an admission, a remote abort) leave the
  // process only once the state that caused them is committed; a crash before that restores a
  // run in which they never happened.
  let stopDriver: () => void = () => {};
  let ended = false;
  const startDriver = () => {
    if (ended) return;
    try {
      stopDriver = deps.turnDriver.start(context);
    } catch (error) {
      log.error({ err: error }, "the Turn driver threw on start; the Turn stays playable by hand");
    }
  };
  const stop = () => {
    try {
      stopDriver();
    } catch (error) {
      log.error({ err: error }, "the Turn driver threw on stop");
    }
  };
  if (deps.afterCommit) deps.afterCommit(run, startDriver);
  else startDriver();
  return () => {
    ended = true;
    registrations.deregister(current);
    log.info({ turnId: current.turnId }, "Turn ended");
    // A shutdown stops at once (no remote abort: the run stays restorable).
    if (deps.afterCommit && deps.shuttingDown?.() !== true) deps.afterCommit(run, stop);
    else stop();
  };
}

/** A continued conversation's address, `<runId>/<invoker's actor path>/<agent>`, as the mapper mints it (§5.3). */
function addressOf(runId: string, turn: TurnStart): string {
  const invoker = parentOf(turn.self);
  return [runId, invoker ? actorPathOf(invoker) : "", turn.input.agentName]
    .filter((p) => p.length > 0)
    .join("/");
}
