import { z } from "zod";
import { McpSnapshotEntry } from "./mcp-snapshot.js";
import { Notice } from "./notice.js";
import { UsageTotals } from "./runs.js";

/**
 * Turn transcripts (issue 11 item 3): the Harness streams what it sends and receives as
 * `transcript` events on the conversation stream; the Orchestrator records each once by
 * (iid, submissionId, stream position) and serves them per Turn. The Orchestrator never reads
 * pi's message format: every entry carries the exact JSON of what went to (or came from) the
 * provider next to a readable form. An older Orchestrator skips the event (§7.6).
 * @see SPEC §7.1, §7.6; docs/adr/0257-turn-transcripts.md
 */

/** Where a nullable token count was not reported by the provider (never 0, ADR-0400). */
const count = z.number().int().nonnegative().nullable();

/**
 * What the Harness did with one tool call of an answer: `pick` (a Menu call, delivered to the
 * Orchestrator), `working` (a Working tool it ran), `invented` (a name on no tools block; not
 * run), `not-run` (a real tool, refused before running: bad arguments, a call after a pick, a
 * Working tool the Agent may not use, …; `reason` says which).
 */
export const CallDisposition = z.enum(["pick", "working", "invented", "not-run"]);
export type CallDisposition = z.infer<typeof CallDisposition>;

/** One tool call of a model answer, as the model wrote it and as it is replayed. */
export const TranscriptToolCall = z.object({
  id: z.string(),
  /** The id the server sent, when jr2 gave the call another (ids are unique per conversation, issue 25). */
  serverId: z.string().optional(),
  name: z.string(),
  /** The arguments exactly as the model's bytes carried them (a JSON text, possibly invalid). */
  rawArguments: z.string(),
  /** The arguments as the next request replays them (JSON text), when it differs from `rawArguments`. */
  replayedArguments: z.string().optional(),
  disposition: CallDisposition,
  /** Why a call was not run, in words; absent for `pick` and `working`. */
  reason: z.string().optional(),
});
export type TranscriptToolCall = z.infer<typeof TranscriptToolCall>;

/**
 * What a user-, assistant- or tool-role message is to a reader: the Turn's `prompt` (a task,
 * with its Turn part), a `nudge`, a step-boundary `restatement` of the Allowed picks, a request
 * to `continue` after an answer cut at the output limit, a Working tool's `tool-result`, a
 * pick's `receipt`, the model's `answer` as replayed, or `other`.
 */
export const MessagePart = z.enum([
  "prompt",
  "nudge",
  "restatement",
  "continue",
  "tool-result",
  "receipt",
  "answer",
  "other",
]);
export type MessagePart = z.infer<typeof MessagePart>;

/**
 * One transcript entry (discriminated by `kind`):
 * - `prefix`: once per conversation (again only if it ever changed), the system prompt and the
 *   tools block exactly as the first request sent them;
 * - `message`: one message of a request's `messages` the conversation had not sent before, in
 *   order; `json` is that message's exact JSON in the request body;
 * - `answer`: one model request's answer as received (text, reasoning, tool calls), its usage
 *   and finish reason; `replayed: false` marks a retried attempt's answer that never reached
 *   the conversation; `error` says why an answer failed.
 */
export const TranscriptEntry = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("prefix"),
    system: z.string(),
    /** The request body's `tools` array, exact JSON text. */
    toolsJson: z.string(),
  }),
  z.object({
    kind: z.literal("message"),
    role: z.enum(["user", "assistant", "tool"]),
    part: MessagePart,
    /** The readable text of the message (what a terminal shows). */
    text: z.string(),
    toolCallId: z.string().optional(),
    toolName: z.string().optional(),
    /** The structured notices rendered into this message's Turn part (§7.3). */
    notices: z.array(Notice).optional(),
    /** The message exactly as it went to the provider (JSON text). */
    json: z.string(),
  }),
  z.object({
    kind: z.literal("answer"),
    /** The model entry's name (never a URL or key). */
    model: z.string(),
    text: z.string(),
    reasoning: z.string().optional(),
    toolCalls: z.array(TranscriptToolCall),
    finishReason: z.string().optional(),
    usage: z.object({ promptTokens: count, cachedTokens: count, completionTokens: count }).nullable(),
    /** 1 for the first attempt; retries count up (ADR-0401). */
    attempt: z.number().int().positive().optional(),
    /** False: a retried attempt's answer; the conversation never saw it. */
    replayed: z.boolean(),
    error: z.string().optional(),
  }),
  McpSnapshotEntry,
]);
export type TranscriptEntry = z.infer<typeof TranscriptEntry>;

/** Stream event `transcript` (on the conversation stream, §7.1): one entry of a Submission. */
export const TranscriptStreamEvent = z.object({
  type: z.literal("transcript"),
  submissionId: z.string(),
  entry: TranscriptEntry,
});
export type TranscriptStreamEvent = z.infer<typeof TranscriptStreamEvent>;

/** Entries are capped at this many UTF-8 bytes per text field when stored (issue 11 rules). */
export const TRANSCRIPT_FIELD_CAP_BYTES = 64 * 1024;

/**
 * How a Turn ended: `running` (not yet), `picked` (a pick moved its Machine), `faulted` (an
 * `agent.fault`), `left` (its state was left otherwise — a Gate, a timer, another Agent's pick,
 * a cancel).
 */
export const TurnOutcome = z.enum(["running", "picked", "faulted", "left"]);
export type TurnOutcome = z.infer<typeof TurnOutcome>;

/** `GET /runs/:runId/turns` item: one Turn of the run, in the order they started. */
export const TurnSummary = z.object({
  turnId: z.string(),
  agent: z.string(),
  /** The invoking state's path. */
  state: z.string(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  outcome: TurnOutcome,
  /**
   * Its pick (name and arguments), or null: the pick that ended it when `picked`; otherwise its
   * newest delivered pick that kept it in its state (an in-state move) — a Turn `left` or
   * `faulted` after one keeps it.
   */
  pick: z.object({ name: z.string(), arguments: z.unknown() }).nullable(),
  /** Its fault, when it faulted. */
  fault: z
    .object({ reason: z.string(), cause: z.string().optional(), detail: z.string().optional() })
    .optional(),
  /** Totals over this Turn's recorded model requests. */
  usage: UsageTotals,
});
export type TurnSummary = z.infer<typeof TurnSummary>;

/** `GET /runs/:runId/turns` answer. */
export const TurnList = z.object({ turns: z.array(TurnSummary) });
export type TurnList = z.infer<typeof TurnList>;

/**
 * One stored transcript entry: `at` (ISO-8601) when the Orchestrator recorded it, the
 * Submission it belongs to, and `capped` (field name → full UTF-8 byte count) for each text
 * field cut at {@link TRANSCRIPT_FIELD_CAP_BYTES}.
 */
export const TranscriptRecord = z.object({
  at: z.string(),
  submissionId: z.string(),
  entry: TranscriptEntry,
  capped: z.record(z.string(), z.number().int().nonnegative()).optional(),
});
export type TranscriptRecord = z.infer<typeof TranscriptRecord>;

/**
 * `GET /runs/:runId/turns/:turnId` answer: the Turn, its conversation's `prefix` (the system
 * prompt and tools block, recorded once per conversation; null if never recorded) and its
 * entries in order (readable while the Turn runs).
 */
export const TurnTranscript = TurnSummary.extend({
  prefix: z.object({ system: z.string(), toolsJson: z.string() }).nullable(),
  entries: z.array(TranscriptRecord),
});
export type TurnTranscript = z.infer<typeof TurnTranscript>;
