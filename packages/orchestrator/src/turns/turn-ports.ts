import type {
  AgentDefinition,
  ConversationHistory,
  FaultCause,
  HistorySubmission,
  PickAnswer,
  TranscriptEntry,
} from "@jr2/wire";
import type { LedgerEntry } from "../durability/store/run-store.js";
import type { UsageRecord } from "../durability/usage-totals.js";
import type { TurnInput } from "../xstate/run-binding.js";
import type { AgentFaultReason } from "./agent-fault-event.js";
import type { HarnessClient } from "./harness-client.js";
import type { OutboundQueues } from "./outbound-queue.js";

/**
 * What the run host hands one Turn's mechanics (SPEC §5): the ports, the knobs, the telemetry
 * it reports and the handle it gets back. No xstate object: the mechanics are testable against
 * a fake Harness and a fake Machine.
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
  | {
      type: "retry";
      attempt: number;
      reason: string;
      waitMs?: number;
      model?: string;
      message?: string;
      /** `<submissionId>@<stream position>` of a Harness retry event: told once by it (issue 22 §5). */
      key?: string;
    }
  /** The model wrote its tool call as text; the nudge carries the `text-call` notice. */
  | { type: "text-call"; where?: "reasoning" }
  /** The Harness's warning for this Turn (issue 26: sandbox off, `network: "host"`). */
  | { type: "warning"; message: string }
  /** A model request waits for the KV working set, or (`waitedMs`) the Submission's wait in all (issue 30). */
  | { type: "queued"; position?: number; reason?: string; waitedMs?: number }
  /** One transcript entry of the stream at `position` (ADR-0257): recorded, never a feed line itself. */
  | { type: "transcript"; submissionId: string; position: string; entry: TranscriptEntry };

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
  /**
   * How long a Turn waits in all for a Harness whose store refuses writes (503
   * `JR2_ERR_HARNESS_STORE_FAILING`, ADR-0177) before it faults (ADR-0289). Default 10 min.
   */
  storeFailingWaitMs?: number;
}

/** The knobs jr2 runs with: 2 nudges, a one-hour deadline, 20 s polls, 90 s to admit. */
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
  /** The Turn's state path, sent on each Submission: the Harness names it in its commits (ADR-0220). */
  state?: string;
  /** Its workspace's network (issue 26), sent on each Submission. */
  network?: readonly string[] | "host";
  /** The Turn's `traceparent` (ADR-0421): sent on its admissions and saved with its ledger entry. */
  traceparent?: string;
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
  /** Keeps one `history` stream event of a continued conversation (issue 27). Absent: none kept. */
  recordHistory?(iid: string, part: HistorySubmission): void;
  /** The byte-exact history kept of `iid`, pushed on a `kept` re-admission after a 404 (issue 27). */
  historyOf?(iid: string): ConversationHistory | undefined;
  telemetry(event: TurnTelemetry): void;
  /**
   * Records the Repo-Slot commits a settlement carried (any outcome, ADR-0219) (`{ "<workspace>/<slot>": id }`,
   * issue 28 §3) before the fault is sent, so the version the fault makes keeps them. Absent: dropped.
   */
  recordCommits?(commits: Readonly<Record<string, string>>): void;
  /** Ends the Turn for the workflow: sends `agent.fault { reason, detail?, cause? }` to the invoker. */
  fault(reason: FaultReason, detail?: string, cause?: FaultCause): void;
  /** The Harness acknowledged the stop's abort of `iid`'s Submission (an owed abort paid, ADR-0280). */
  aborted?(iid: string): void;
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
