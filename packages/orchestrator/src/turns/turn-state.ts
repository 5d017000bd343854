import type { TurnFault } from "./fault-causes.js";
import type { TurnPorts } from "./turn-ports.js";

/**
 * What the phases of one Turn share (SPEC §5): one record made by {@link newTurnState} and
 * passed to each phase (admission, follow, the ask-again rule), never hidden in a closure;
 * and the few effects every phase uses over it — end with a fault, abort the Submission, wait
 * for a change of the run, sleep with backoff.
 */

/** The state of one Turn's mechanics. Mutated by the phases; `stop` flips `stopped`. */
export interface TurnState {
  readonly ports: TurnPorts;
  /** The conversation the Turn uses now; a reseat after a loss moves it (§5.3). */
  iid: string;
  /** `stop` was called: the Turn's state exited (or the host shuts down). */
  stopped: boolean;
  /** `stop({ shutdown: true })`: the Submission is left running for restore (§5.1). */
  shuttingDown: boolean;
  /** The drain after stop is over (see `follow`). */
  drained: boolean;
  /** Re-admissions on a new conversation so far: the feed `retry` line's `attempt`. */
  attempt: number;
  /** Admissions of this Turn the Harness provably lost in transit (see `afterInTransit`). */
  inTransitLosses: number;
  /** The kept history was pushed on a re-admission once (issue 27, harness-restarted.ts). */
  historyPushed?: boolean;
  /** Re-admissions after `harness-restarted` settlements (issue 27, harness-restarted.ts). */
  restartReadmits?: number;
  /** The Turn was nudged once after output the server could not parse (issue 25 §13). */
  unparsableNudged?: boolean;
  /**
   * The deadline passed (§5.6): its fault, sent once the aborted Submission's settlement — and
   * the Worktree commit it carries (ADR-0219) — is read, or after {@link DEADLINE_SETTLE_MS}.
   */
  pastDeadline?: TurnFault;
  /** The bounded wait for that settlement (cleared when the settlement came first). */
  deadlineWait?: unknown;
  /** Aborts the stream read in flight (stop). */
  readonly polls: AbortController;
  /** The wait of {@link until} in flight, so `stop` can end it. */
  wakeUnsubscribe?: () => void;
  wakeResolve?: () => void;
}

/**
 * How long a Turn past its deadline waits for its aborted Submission's settlement before it
 * faults without it, ms: the Harness commits the Worktree first (ADR-0219), which takes a
 * second or two on a large tree.
 */
export const DEADLINE_SETTLE_MS = 10_000;

/** A fresh state for a Turn on `ports.input.iid`. */
export function newTurnState(ports: TurnPorts): TurnState {
  return {
    ports,
    iid: ports.input.iid,
    stopped: false,
    shuttingDown: false,
    drained: false,
    attempt: 0,
    inTransitLosses: 0,
    polls: new AbortController(),
  };
}

/** The Turn is over for its mechanics: stopped, or its registration no longer the live one. */
export function isOver(state: TurnState): boolean {
  return state.stopped || !state.ports.isOpen();
}

/** The model the Turn's requests name (the Turn input's, else the Agent's). */
export function modelOf(ports: TurnPorts): string {
  return ports.input.model ?? ports.definition.model;
}

/** Resolves after `ms` on the injected clock. */
export function sleep(state: TurnState, ms: number): Promise<void> {
  return new Promise((resolve) => state.ports.setTimeout(resolve, ms));
}

/** The wait before retry number `n + 1`, ms: exponential up to `backoffMaxMs`, half jittered. */
export function backoff(state: TurnState, n: number): number {
  const { config } = state.ports;
  const ceiling = Math.min(config.backoffMaxMs, config.backoffMinMs * 2 ** n);
  return ceiling / 2 + (state.ports.random() * ceiling) / 2;
}

/**
 * Ends the Turn for the workflow with `fault` (§5.6): feed `fault`, a warn, and `agent.fault`
 * to the invoker. Does nothing once the Turn is over (one terminal fault per Turn).
 */
export function endTurn(state: TurnState, fault: TurnFault): void {
  if (isOver(state)) return;
  const { reason, detail, cause } = fault;
  const { ports } = state;
  ports.telemetry({ type: "fault", reason, ...(detail ? { detail } : {}), ...(cause ? { cause } : {}) });
  ports.log("warn", "Turn faulted", { reason, cause, detail });
  ports.fault(reason, detail, cause);
}

/**
 * Aborts the conversation's Submission, in the per-iid FIFO of outbound calls (§5.3). The
 * call names the iid the Turn holds when it leaves the queue.
 */
export function abortRemote(state: TurnState): Promise<unknown> {
  const { ports } = state;
  return ports.outbound.run(state.iid, () => ports.client.abort(state.iid));
}

/**
 * Waits until `ready()` holds or the Turn ends, checked after every settled change of the run
 * (the wake watches `allowed().length > 0`, §5.7; a re-admission after a loss watches Rest).
 */
export function until(state: TurnState, ready: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (isOver(state) || ready()) {
        state.wakeUnsubscribe?.();
        state.wakeUnsubscribe = undefined;
        state.wakeResolve = undefined;
        resolve();
      }
    };
    state.wakeResolve = resolve;
    state.wakeUnsubscribe = state.ports.watch(check);
    check();
  });
}
