import type {
  Admission,
  AgentDefinition,
  FaultCause,
  Notice,
  PickAnswer,
  StreamEvent,
  SubmissionRequest,
} from "@jr2/wire";
import { readUsage } from "@jr2/wire";
import { crashPoint } from "../durability/crash-points.js";
import type { LedgerEntry } from "../durability/store/run-store.js";
import { streamPosition, type UsageRecord } from "../durability/usage-totals.js";
import type { TurnInput } from "../xstate/run-binding.js";
import type { AgentFaultReason } from "./agent-fault-event.js";
import { bounded, faultOfRefusal, faultOfSettlement } from "./fault-causes.js";
import type { HarnessClient, HealthResult } from "./harness-client.js";
import { judgeInTransit } from "./lost-admission.js";
import type { OutboundQueues } from "./outbound-queue.js";

/**
 * The Agent actor's mechanics for one Turn (SPEC §5): admit, ledger, follow the Submission,
 * nudge and wake on one budget, the fault classes, the deadline, abort on exit.
 * It holds no xstate object: the run host hands it ports (the live Allowed picks, whether the
 * Turn is still open, a change watch, the ledger, the feed), so it is testable against a fake
 * Harness and a fake Machine.
 */

export type { LedgerEntry };

/** The reasons an `agent.fault` carries (§5.6). `infra` carries a detail. */
export type FaultReason = AgentFaultReason;

/**
 * Telemetry for the run feed; never carries an iid (§5.6). A `usage` event carries its
 * Submission and stream position: with the Turn's iid, the key it is stored once by
 * (ADR-0255). Picks are not here: the run host records every pick at delivery, hand-played
 * ones included.
 */
export type TurnTelemetry =
  | { type: "admission"; kind: "task" | "nudge"; allowed: string[] }
  | ({ type: "usage" } & Omit<UsageRecord, "iid">)
  | { type: "fault"; reason: FaultReason; detail?: string; cause?: FaultCause }
  /**
   * An admission sent again, or the Harness retrying a model request / waiting for the model
   * endpoint (issue 10 §3: then `waitMs`, `model` and `message` are set).
   */
  | { type: "retry"; attempt: number; reason: string; waitMs?: number; model?: string; message?: string }
  /** The model wrote its tool call as text; the nudge carries the `text-call` notice. */
  | { type: "text-call" };

/** A run of failed stream reads: since when (ms), and when the feed last said so. */
interface Outage {
  since: number;
  saidAt?: number;
}

/** Knobs of the mechanics; defaults in {@link defaultTurnConfig}. Times in milliseconds. */
export interface TurnConfig {
  /** Nudges and wakes together (§5.7). */
  nudgeBudget: number;
  /** Wall-clock budget of a Turn (§5.6). */
  deadlineMs: number;
  /** Long-poll wait per stream read, seconds. */
  pollWaitSeconds: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  /** How long an admission that provably never left the host is re-sent (§5.5). */
  admitWindowMs: number;
}

export const defaultTurnConfig: TurnConfig = {
  nudgeBudget: 2,
  deadlineMs: 60 * 60_000,
  pollWaitSeconds: 20,
  backoffMinMs: 250,
  backoffMaxMs: 5_000,
  admitWindowMs: 90_000,
};

/** The ports the run host gives one Turn. None may throw. */
export interface TurnPorts {
  input: TurnInput;
  definition: AgentDefinition;
  client: HarnessClient;
  /** The Turn's working directory (placement), if it has Working tools. */
  cwd?: string;
  outbound: OutboundQueues;
  config: TurnConfig;
  /** The Allowed picks now (`[]` when not at Rest). */
  allowed(): string[];
  /** Is this Turn's registration still the live one at its iid? */
  isOpen(): boolean;
  /** Is the Agent's state at Rest now (§3.5)? */
  atRest(): boolean;
  /** The newest delivered answer a pick of this Turn got, if any. */
  lastAnswer(): { pick: string; answer: PickAnswer } | undefined;
  /** Calls `onChange` after any actor of the run settled a macrostep; returns unsubscribe. */
  watch(onChange: () => void): () => void;
  /** Ledger read/write (§5.4); `write` resolves after the save committed. */
  ledgerRead(iid: string): LedgerEntry | undefined;
  ledgerWrite(iid: string, entry: LedgerEntry): Promise<void>;
  /** The conversation was lost: bump the epoch / mint a fresh iid and re-register; returns it. */
  reseat(): string;
  telemetry(event: TurnTelemetry): void;
  /** Ends the Turn for the workflow: sends `agent.fault { reason, detail?, cause? }` to the invoker. */
  fault(reason: FaultReason, detail?: string, cause?: FaultCause): void;
  log: (level: "info" | "warn", msg: string, fields?: Record<string, unknown>) => void;
  /** Injected clock (tests use fake timers). */
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (handle: unknown) => void;
  random: () => number;
}

/** A running Turn; `stop` ends it (state exit) — `shutdown: true` leaves it restorable (§5.1). */
export interface TurnHandle {
  stop(options?: { shutdown?: boolean }): void;
  /** Resolves when the mechanics have nothing more to do (tests). */
  readonly done: Promise<void>;
}

type Settlement = Extract<StreamEvent, { type: "submission-settled" }>;
/** Re-admissions of one Turn after the Harness lost its admission in transit (a poison request bound). */
const IN_TRANSIT_READMITS = 2;
/** How long a stopped Turn keeps reading its stream for the last usage events, ms. */
const DRAIN_MS = 10_000;

type FollowResult = { kind: "settled"; settlement: Settlement } | { kind: "lost" } | { kind: "stopped" };

/**
 * Starts the mechanics of one Turn. Re-attaches when the ledger holds an admission with this
 * Turn's turnId (§5.4), otherwise admits the task.
 * @see SPEC §5.1–§5.7
 */
export function startTurn(ports: TurnPorts): TurnHandle {
  const { input, config } = ports;
  let iid = input.iid;
  let stopped = false;
  let shuttingDown = false;
  /** The drain after stop is over (see follow). */
  let drained = false;
  let budget = config.nudgeBudget;
  let attempt = 0;
  /** Admissions of this Turn the Harness provably lost in transit (see afterInTransit). */
  let inTransitLosses = 0;
  const polls = new AbortController();
  let wakeUnsubscribe: (() => void) | undefined;
  let wakeResolve: (() => void) | undefined;

  const deadline = ports.setTimeout(() => {
    if (stopped) return;
    void abortRemote().then(() => end("deadline", `the Turn ran past its ${config.deadlineMs} ms deadline`));
  }, config.deadlineMs);

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => ports.setTimeout(resolve, ms));
  }

  function backoff(n: number): number {
    const ceiling = Math.min(config.backoffMaxMs, config.backoffMinMs * 2 ** n);
    return ceiling / 2 + (ports.random() * ceiling) / 2;
  }

  function end(reason: FaultReason, detail?: string, cause?: FaultCause): void {
    if (stopped || !ports.isOpen()) return;
    ports.telemetry({ type: "fault", reason, ...(detail ? { detail } : {}), ...(cause ? { cause } : {}) });
    ports.log("warn", "Turn faulted", { reason, cause, detail });
    ports.fault(reason, detail, cause);
  }

  /** The model the Turn's requests name (the Turn input's, else the Agent's). */
  const model = input.model ?? ports.definition.model;

  function abortRemote(): Promise<unknown> {
    return ports.outbound.run(iid, () => ports.client.abort(iid));
  }

  function submission(kind: "task" | "nudge", kept: boolean, notices: Notice[]): SubmissionRequest {
    return {
      agent: input.agentName,
      kind,
      definition: ports.definition,
      ...(kind === "task" ? { prompt: input.prompt } : {}),
      ...(ports.cwd ? { cwd: ports.cwd } : {}),
      ...(input.model ? { model: input.model } : {}),
      ...(input.thinkingLevel ? { thinkingLevel: input.thinkingLevel } : {}),
      ...(kept ? { kept: true } : {}),
      ...(input.turnId ? { turnId: input.turnId } : {}),
      ...(notices.length ? { notices } : {}),
    };
  }

  /**
   * Admits one Submission; re-sends only what provably never left the host (§5.5), or what the
   * Harness provably lost in transit (issue 16 item 5). `lost`: admit the task again on a new
   * conversation. `/healthz` is read before each POST so a failure in transit can be judged
   * against the Harness process that took it.
   */
  async function admit(body: SubmissionRequest): Promise<Admission | "lost" | "in-transit-lost" | "failed"> {
    const started = Date.now();
    const harnessUrl = ports.client.endpoint.url;
    for (let n = 0; ; n++) {
      if (stopped) return "failed";
      const before = await ports.client.health?.();
      const result = await ports.outbound.run(iid, () => ports.client.admit(iid, body));
      if (result.kind === "admitted") return result.admission;
      if (result.kind === "lost") return "lost";
      if (result.kind === "unsent" && Date.now() - started < config.admitWindowMs) {
        ports.telemetry({ type: "retry", attempt: n + 1, reason: `admission not sent: ${result.error}` });
        await sleep(backoff(n));
        continue;
      }
      if (result.kind === "unknown") return afterInTransit(result.error, before);
      if (result.kind === "refused") {
        const fault = faultOfRefusal(result.status, result.body, {
          harnessUrl,
          agent: input.agentName,
          model,
        });
        end(fault.reason, fault.detail, fault.cause);
      } else {
        end(
          "infra",
          `admission failed: the Harness at ${harnessUrl} could not be reached within ${config.admitWindowMs} ms (${result.error})`,
          "unavailable",
        );
      }
      return "failed";
    }
  }

  /**
   * The admission's request failed in transit: admit again only if the Harness provably lost
   * it, after aborting the old iid (abort is never 404); otherwise fault `infra` /
   * `unavailable` (ADR-0037). Waiting for the Harness spends no budget.
   */
  async function afterInTransit(
    error: string,
    before: HealthResult | undefined,
  ): Promise<"in-transit-lost" | "failed"> {
    const verdict = await judgeInTransit({
      client: ports.client,
      iid,
      offset: ports.ledgerRead(iid)?.offset ?? "0",
      before,
      windowMs: config.admitWindowMs,
      now: () => Date.now(),
      sleep,
      backoff,
      stopped: () => stopped || !ports.isOpen(),
      onWait: (n, _waitMs, why) =>
        ports.telemetry({ type: "retry", attempt: n, reason: `waiting for the Harness to answer: ${why}` }),
    });
    // A Turn that ended while the Harness was probed reseats nothing and faults nothing.
    if (verdict.kind === "stopped" || stopped || !ports.isOpen()) return "failed";
    if (verdict.kind === "lost" && ++inTransitLosses > IN_TRANSIT_READMITS) {
      // A request that kills the Harness each time it arrives must not crash-loop it.
      end(
        "infra",
        `${verdict.why}: the Harness lost this Turn's admission in transit ${inTransitLosses} times; it is not sent again`,
        "unavailable",
      );
      return "failed";
    }
    if (verdict.kind === "lost") {
      ports.log(
        "warn",
        "the admission was lost with the Harness; the old iid is aborted and the Turn admitted again",
        {
          why: verdict.why,
          error,
        },
      );
      await abortRemote();
      return stopped || !ports.isOpen() ? "failed" : "in-transit-lost";
    }
    end(
      "infra",
      verdict.kind === "older"
        ? `admission failed: ${error} (the Harness at ${ports.client.endpoint.url} tells no bootId, so whether it took the admission cannot be known)`
        : `${verdict.detail}; the request failed with ${error}`,
      "unavailable",
    );
    return "failed";
  }

  /**
   * Follows the stream from `offset` until this Submission settles; reconnects without deadline
   * (saying so on the feed while the Harness does not answer).
   * After `stop` it keeps reading for a bounded drain (the Submission settles right after the
   * pick that ended the Turn, or the abort): the last model requests' usage still reaches the
   * feed, so a run's totals equal what the provider reported.
   */
  async function follow(submissionId: string, offset: string): Promise<FollowResult> {
    let cursor = offset;
    let outage: Outage | undefined;
    for (let n = 0; ; ) {
      if (stopped && (shuttingDown || drained)) return { kind: "stopped" };
      const wait = stopped ? 1 : config.pollWaitSeconds;
      const page = await ports.client.read(iid, cursor, wait, polls.signal);
      if (page.kind === "lost") return stopped ? { kind: "stopped" } : { kind: "lost" };
      if (page.kind === "transport") {
        if (stopped) return { kind: "stopped" };
        outage ??= { since: Date.now() };
        sayHarnessUnreachable(page.error, n, outage);
        await sleep(backoff(n++));
        continue;
      }
      if (outage?.saidAt !== undefined)
        ports.log("info", "the Harness answers the stream again", { iid, turnId: input.turnId });
      outage = undefined;
      n = 0;
      if (page.kind === "idle") continue;
      const pageStart = cursor;
      cursor = page.nextOffset;
      for (const [index, event] of page.events.entries()) {
        if (event.type === "usage") {
          // Keyed by its place in the stream: read again after a restart, it is recorded once (ADR-0255).
          const position = streamPosition(pageStart, index);
          const finish = event.finishReason === undefined ? {} : { finishReason: event.finishReason };
          ports.telemetry({
            type: "usage",
            submissionId: event.submissionId,
            position,
            ...readUsage(event),
            ...finish,
          });
        } else if (event.type === "submission-settled" && event.submissionId === submissionId) {
          return stopped ? { kind: "stopped" } : { kind: "settled", settlement: event };
        } else if (event.type === "retry") {
          // Telemetry only: a wait for the model endpoint spends no budget and resets nothing.
          const { attempt: n, cause: reason, waitMs, model: entry, message } = event;
          ports.telemetry({
            type: "retry",
            attempt: n,
            reason,
            waitMs,
            model: entry,
            message: bounded(message, 500),
          });
        }
      }
    }
  }

  /**
   * An unreachable Harness is read again without a deadline (seed ADR-0016: a restarted one
   * answers 404 and the Turn goes on on a new conversation; the Turn deadline still bounds it),
   * but never in silence: once the outage has lasted 5 s (a quick restart says nothing), a feed
   * `retry` line and a warn, then once a minute while it lasts. Updates `outage.saidAt`.
   */
  function sayHarnessUnreachable(error: string, attempt: number, outage: Outage): void {
    const now = Date.now();
    if (now - outage.since < 5_000) return;
    if (outage.saidAt !== undefined && now - outage.saidAt < 60_000) return;
    outage.saidAt = now;
    const message = `the Harness at ${ports.client.endpoint.url} does not answer the Turn's stream (${bounded(error, 200)}); reading again until it does — the Turn deadline still applies`;
    ports.telemetry({ type: "retry", attempt: attempt + 1, reason: "waiting for the Harness", message });
    ports.log("warn", "the Harness does not answer the Turn's stream; reading again", {
      iid,
      turnId: input.turnId,
      error,
    });
  }

  /**
   * Waits until `ready()` holds or the Turn ends, checked after every settled change of the run
   * (the wake watches `allowed().length > 0`, §5.7; a re-admission after a loss watches Rest).
   */
  function until(ready: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (stopped || !ports.isOpen() || ready()) {
          wakeUnsubscribe?.();
          wakeUnsubscribe = undefined;
          wakeResolve = undefined;
          resolve();
        }
      };
      wakeResolve = resolve;
      wakeUnsubscribe = ports.watch(check);
      check();
    });
  }

  /** The Harness reported a tool call written as text (issue 10 §3): feed event and warn log, no model text. */
  function onTextCall(): void {
    ports.telemetry({ type: "text-call" });
    ports.log(
      "warn",
      "the model wrote a tool call as text instead of calling it; is the model server's tool-call parser on?",
      {
        model,
        iid,
        turnId: input.turnId,
      },
    );
  }

  async function run(): Promise<void> {
    let kind: "task" | "nudge" = "task";
    let notices: Notice[] = [];
    const earlier = ports.ledgerRead(iid);
    let current: LedgerEntry | undefined =
      earlier && (input.turnId === null || earlier.turnId === input.turnId) ? earlier : undefined; // no turnId: the iid alone decides (§5.4)
    if (current)
      ports.log("info", "re-attaching to the ledgered admission", { submissionId: current.submissionId });
    // An existing continued conversation is admitted `kept: true` (§5.3).
    let kept = input.continuation && earlier !== undefined;

    /**
     * The Harness lost the conversation (it restarted): the next admission is the task on a new
     * one (§5.3, §5.7), told the answer of the Turn's newest pick — the new conversation never
     * read it (§5.6). It waits for Rest first: a Turn cut while its state works is admitted once
     * that work is done, and spends no budget.
     */
    const onNewConversation = (reason = "conversation lost; admitted on a new one") => {
      iid = ports.reseat();
      kind = "task";
      kept = false;
      waitForRest = true;
      const last = ports.lastAnswer();
      notices = [
        { type: "conversation-new" },
        ...(last ? [{ type: "pick-answer" as const, pick: last.pick, answer: last.answer }] : []),
      ];
      ports.telemetry({ type: "retry", attempt: ++attempt, reason });
    };

    let waitForRest = false;
    while (!stopped) {
      if (!current && waitForRest) {
        waitForRest = false;
        await until(() => ports.atRest());
        if (stopped || !ports.isOpen()) return;
      }
      if (!current) {
        const admission = await admit(submission(kind, kept || kind === "nudge", notices));
        if (admission === "failed") return;
        if (admission === "lost") {
          onNewConversation();
          continue;
        }
        if (admission === "in-transit-lost") {
          onNewConversation("the Harness lost the admission in transit; admitted on a new conversation");
          continue;
        }
        crashPoint("admit-sent");
        current = { turnId: input.turnId, ...admission };
        await ports.ledgerWrite(iid, current);
        crashPoint("ledgered");
        // Read after the admission: the Machine has settled the macrostep that started this Turn.
        ports.telemetry({ type: "admission", kind, allowed: ports.allowed() });
      }
      const outcome = await follow(current.submissionId, current.offset);
      current = undefined;
      if (outcome.kind === "stopped") return;
      if (outcome.kind === "lost") {
        onNewConversation();
        continue;
      }
      const { settlement } = outcome;
      if (!ports.isOpen() || stopped) return;
      if (settlement.outcome === "failed") {
        // Never nudged: context-overflow, bad-request, unknown-model, a spent retry bound (§5.6).
        const fault = faultOfSettlement(settlement.error);
        return end(fault.reason, fault.detail, fault.cause);
      }
      if (settlement.outcome === "aborted") {
        return end("infra", "the Harness aborted the Submission while the Turn was open");
      }
      // completed while the Turn is open: the ask-again rule (§5.7).
      const textCall = settlement.textCall === true;
      if (textCall) onTextCall();
      if (ports.allowed().length === 0) await until(() => ports.allowed().length > 0);
      if (stopped || !ports.isOpen()) return;
      if (budget <= 0)
        return textCall
          ? end(
              "no-signal",
              `the model stopped without a pick ${config.nudgeBudget + 1} times, the last time writing its tool call as text (model \`${model}\`): the model server's tool-call parser may be off`,
              "text-call",
            )
          : end("no-signal", `the model stopped without a pick ${config.nudgeBudget + 1} times`);
      budget--;
      kind = "nudge";
      kept = true;
      // A text call gets its own words on the nudge; the markup is never parsed or delivered.
      notices = textCall ? [{ type: "text-call" }] : [];
    }
  }

  const done = run()
    .catch((error: unknown) => {
      ports.log("warn", "Turn mechanics failed", { error: String(error) });
      end("infra", String(error));
    })
    .finally(() => {
      ports.clearTimeout(deadline);
    });

  return {
    done,
    stop(options) {
      if (stopped) return;
      stopped = true;
      shuttingDown = options?.shutdown === true;
      ports.clearTimeout(deadline);
      if (shuttingDown) polls.abort();
      else
        ports.setTimeout(() => {
          drained = true;
          polls.abort();
        }, DRAIN_MS);
      wakeUnsubscribe?.();
      wakeResolve?.();
      // A Turn that is over but whose Submission runs is an unaccounted writer (§5.1);
      // a host shutting down leaves it running for restore.
      if (!shuttingDown) void abortRemote();
    },
  };
}
