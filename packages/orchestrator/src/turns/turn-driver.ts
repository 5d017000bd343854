import type {
  ConversationHistory,
  FaultCause,
  RunFeedEntry as FeedEntry,
  HistorySubmission,
  PickAnswer,
  TranscriptEntry,
} from "@jr2/wire";
import type { Logger } from "pino";
import type { LedgerEntry } from "../durability/store/run-store.js";
import type { RequestUsage, UsageRecord } from "../durability/usage-totals.js";
import type { TurnStart } from "../xstate/run-binding.js";
import type { Registration } from "./registration-table.js";

/**
 * Turn telemetry for the run feed: a feed entry of a Turn, without its `child` (the host adds
 * it); a `retry` may carry `key` (`<submissionId>@<stream position>`), by which the host tells it
 * once and which it drops before the feed (issue 22 §5).
 */
export type TurnTelemetry = FeedEntry extends infer E
  ? E extends { child: string }
    ? E extends { type: "retry" }
      ? Omit<E, "child"> & { key?: string }
      : Omit<E, "child">
    : never
  : never;

/** A `transcript` stream event as read at `position` of its conversation's stream (ADR-0257). */
export interface TranscriptEvent {
  submissionId: string;
  position: string;
  entry: TranscriptEntry;
}

/** An admission's ledger entry (§5.4): what restore re-attaches to. */
export type TurnLedgerEntry = LedgerEntry;

/** An ended Turn's admission whose remaining usage a restore reads (ADR-0255). */
export interface DrainTarget {
  harnessUrl: string;
  iid: string;
  entry: TurnLedgerEntry;
  /** Checked before each read (ADR-0280): false sends nothing more. Absent: always. */
  holdsLease?: () => boolean | Promise<boolean>;
  /** Sent as `x-jr2-instance` (a shared store's instance id). */
  instanceId?: string;
}

/**
 * What the run host hands a {@link TurnDriver} for one registered Turn. Every member is safe
 * to call at any time and never throws (failures become data, STYLE.md).
 * @see SPEC §5.1
 */
export interface TurnContext {
  readonly runId: string;
  /** The Turn's live registration (its identity is the Turn's, §4.3); a new one after `reseat`. */
  readonly registration: Registration;
  /** What the Agent slot handed over: self, finalized input, definition, sendBack. */
  readonly turn: TurnStart;
  /** The Allowed picks now, in Menu order (`[]` when not at Rest or the Turn is over). */
  allowed(): string[];
  /** Is this Turn's registration still the live one at its iid? */
  isOpen(): boolean;
  /** Is the Agent's state at Rest now (§3.5)? */
  atRest(): boolean;
  /** The newest answer a pick of this Turn got, if any (for a re-admission's notice, §5.6). */
  lastAnswer(): { pick: string; answer: PickAnswer } | undefined;
  /**
   * Calls `onChange` once any actor of the run settled (after the mailboxes drained), each
   * time something changed; returns the unsubscribe function.
   */
  watch(onChange: () => void): () => void;
  /** Appends Turn telemetry to the run feed, as `<state path>#<agent>` (never the iid). */
  telemetry(event: TurnTelemetry): void;
  /**
   * Records one model request's usage once by its key (the store's usage rows, ADR-0255) and,
   * when it is new, appends its `usage` feed event. Absent: the driver appends the feed event.
   */
  recordUsage?(record: UsageRecord): void;
  /**
   * Records one `transcript` stream event of this Turn once by its stream position (ADR-0257);
   * when it is new, an answer's Working, invented and not-run tool calls become `tool-call`
   * feed events. Absent: transcripts are not recorded.
   */
  recordTranscript?(event: TranscriptEvent): void;
  /** Records a fault's settlement commits into the run (issue 28 §3; TurnPorts.recordCommits). */
  recordCommits?(commits: Readonly<Record<string, string>>): void;
  /**
   * Ends the Turn for the workflow: sends `agent.fault { reason, detail?, cause? }`, stamped
   * with the Agent's sender, to the invoker. `cause` is what a workflow may route on (§5.6).
   */
  fault(reason: string, detail?: string, cause?: FaultCause): void;
  /** The run's ledger of admissions by iid (§5.4); restored with the run (§8). */
  ledgerRead(iid: string): TurnLedgerEntry | undefined;
  /** Records an admission; resolves after the RunBlob save carrying it committed (§5.4, §8). */
  ledgerWrite(iid: string, entry: TurnLedgerEntry): Promise<void>;
  /**
   * Keeps one `history` stream event of conversation `iid` (issue 27, ADR-0175): only for a
   * continued conversation of a live run, in memory, dropped when the run settles. Absent: none.
   */
  recordHistory?(iid: string, part: HistorySubmission): void;
  /** The kept history of `iid`, for a `kept` re-admission the Harness answered 404 (issue 27). */
  historyOf?(iid: string): ConversationHistory | undefined;
  /** Forgets `iid`'s kept history when the Turn ends (set for a fresh conversation only). */
  dropHistory?(iid: string): void;
  /** Bumps the epoch of a continued conversation address after a terminal fault (§5.3). */
  bumpEpoch(address: string): number;
  /**
   * The conversation was lost (a Harness answered 404): moves this Turn to a new conversation
   * — the next epoch of a continued address, or a fresh `/<8 hex>` — re-registering it there
   * (`registration` then reads the new one). Returns the new iid (the old one if the new
   * address is live already).
   * @see SPEC §5.3, §5.6
   */
  reseat(): string;
  /**
   * The Turn's trace context as a W3C `traceparent` (its `jr2.turn` span, turn-spans.ts): sent
   * on admissions and saved with the ledger entry. Absent when tracing is off (ADR-0421).
   */
  readonly traceparent?: string;
  /** True while the host shuts down for its own reasons: stop must leave the Submission running (§5.1). */
  shuttingDown?(): boolean;
  /**
   * Does this instance still hold the run's lease (ADR-0280)? Checked (awaited: a lapsed clock
   * check asks the database, ADR-0283) before every Harness call the driver sends; false: send
   * nothing. Absent: always.
   */
  holdsLease?(): boolean | Promise<boolean>;
  /** This instance's id on a shared store: sent as `x-jr2-instance` on every Harness call. */
  readonly instanceId?: string;
  /**
   * The Harness acknowledged the abort of `iid`'s Submission (sent when the Turn stopped): the
   * abort it owed is paid (ADR-0280). Absent: nothing is told.
   */
  abortAcknowledged?(iid: string): void;
  /** A pino child logger carrying runId, agent and the invoking state. */
  readonly log: Logger;
}

/**
 * The port that runs a Turn's mechanics once its surface is registered: admission to a
 * Harness, following the Submission, nudge and wake, faults (§5). The run host calls
 * `start` after registering the Turn and calls the returned function when the invoking state
 * exits, before deregistering.
 * Throw policy: `start` must not throw; a throw is logged and the Turn stays registered
 * (playable by hand).
 * @see SPEC §5.1
 */
export interface TurnDriver {
  start(context: TurnContext): () => void;
  /**
   * After a restore: reads the usage left on the stream of an admission whose Turn is not live
   * again (ADR-0255), handing each record to `record` and each transcript event to
   * `transcript` (ADR-0257). Optional; never rejects.
   */
  drainUsage?(
    target: DrainTarget,
    record: (usage: UsageRecord) => void,
    signal: AbortSignal,
    transcript?: (event: TranscriptEvent) => void,
  ): Promise<void>;
  /**
   * After a restore: sends an abort the restored run owes (ADR-0280), in `target.iid`'s FIFO of
   * outbound calls, so ahead of any admission queued on that iid after it. Resolves true once
   * the Harness acknowledged it; never rejects. Optional.
   */
  abortOwed?(target: OwedAbortTarget): Promise<boolean>;
}

/** An abort a restored run owes (ADR-0280): where, and this instance's lease check and id. */
export interface OwedAbortTarget {
  harnessUrl: string;
  iid: string;
  /** Checked before it is sent: false sends nothing. Absent: always. */
  holdsLease?: () => boolean | Promise<boolean>;
  /** Sent as `x-jr2-instance`. */
  instanceId?: string;
}

/**
 * `--harness none`: Turns register their surfaces and are admitted nowhere, so a person or a
 * test plays the Agent over HTTP (`GET /agents/:iid/surface`, `POST /agents/:iid/picks`).
 */
export const handPlayedTurnDriver: TurnDriver = {
  start: () => () => {},
};

/** The run feed's `usage` entry of a record, without `child`: no iid, no key (§5.6). */
export function usageFeedEntry(
  record: RequestUsage & { finishReason?: string | undefined },
): Omit<Extract<FeedEntry, { type: "usage" }>, "child"> {
  const { promptTokens, cachedTokens, completionTokens, finishReason } = record;
  return {
    type: "usage",
    promptTokens,
    cachedTokens,
    completionTokens,
    ...(finishReason === undefined ? {} : { finishReason }),
  };
}
