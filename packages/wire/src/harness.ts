import { z } from "zod";
import { ClientSubmissionId } from "./client-submission-id.js";
import { ConversationHistory, HistoryStreamEvent } from "./conversation-history.js";
import { KvWaitField, QueuedStreamEvent } from "./kv-queue.js";
import { McpServers } from "./mcp.js";
import { Notice } from "./notice.js";
import { PickAnswer } from "./picks.js";
import { ThinkingLevel, WorkspaceAccess } from "./tool.js";
import { TranscriptStreamEvent } from "./transcript.js";
import { WorkspaceCommits } from "./workspace.js";

export { Notice };

/** The Agent definition that rides every admission (the Harness holds no roster, §7.1). */
export const AgentDefinition = z.object({
  model: z.string().min(1),
  instructions: z.string(),
  workspace: WorkspaceAccess,
  thinkingLevel: ThinkingLevel.optional(),
  /**
   * The Agent's MCP servers (issue 29, mcp.ts): secrets by name only. A Harness that does not
   * know a definition key refuses the admission (`JR2_ERR_DEFINITION_KEY_UNKNOWN`, ADR-0231).
   */
  mcp: McpServers.optional(),
});
export type AgentDefinition = z.infer<typeof AgentDefinition>;

/**
 * `POST /conversations/:iid/submissions` body (§7.1). `prompt` is required for `task`;
 * `cwd` must be absolute; `kept: true` says the conversation must already exist (404 if not,
 * seating nothing).
 */
export const SubmissionRequest = z
  .object({
    agent: z.string().min(1),
    kind: z.enum(["task", "nudge"]),
    definition: AgentDefinition,
    prompt: z.string().optional(),
    cwd: z.string().optional(),
    model: z.string().optional(),
    thinkingLevel: ThinkingLevel.optional(),
    kept: z.boolean().optional(),
    turnId: z.string().optional(),
    notices: z.array(Notice).optional(),
    /**
     * The workspace's network (issue 26, ADR-0171): host names its Working tools may reach
     * through the run's egress proxy, or `"host"` for the host's whole network (said on every
     * such Turn's feed). Absent or empty: no network. An older Harness ignores it.
     */
    network: z.union([z.array(z.string().min(1).max(253)).max(64), z.literal("host")]).optional(),
    /**
     * With `kept: true`: the conversation's byte-exact history, pushed by the Orchestrator when
     * the Harness answered 404 for a conversation it has a kept admission of (issue 27). The
     * Harness verifies its hashes and rebuilds the conversation from it. An older Harness drops it.
     */
    history: ConversationHistory.optional(),
    /**
     * The Orchestrator's own id of this Submission (client-submission-id.ts, ADR-0288): asked
     * about after a reset in transit. An older Harness drops it.
     */
    clientSubmissionId: ClientSubmissionId.optional(),
    /**
     * The Turn's state path (`review.coding`, issue 28 §3): the Harness names it in the commits it
     * makes of a Repo-Slot Worktree (ADR-0220). An older Harness drops it; without it the
     * Harness names the conversation's iid.
     */
    state: z.string().min(1).max(512).optional(),
  })
  .superRefine((body, ctx) => {
    if (body.kind === "task" && (body.prompt === undefined || body.prompt.length === 0)) {
      ctx.addIssue({ code: "custom", path: ["prompt"], message: "prompt is required for kind `task`" });
    }
    if (body.cwd !== undefined && !body.cwd.startsWith("/")) {
      ctx.addIssue({
        code: "custom",
        path: ["cwd"],
        message: `cwd \`${body.cwd}\` must be an absolute path`,
      });
    }
  });
export type SubmissionRequest = z.infer<typeof SubmissionRequest>;

/** The admission: the Harness's answer to a Submission, given at once (§7.1). Offsets are opaque. */
export const Admission = z.object({
  submissionId: z.string(),
  offset: z.string(),
  streamUrl: z.string(),
});
export type Admission = z.infer<typeof Admission>;

/** How a Submission ended (§7.2 step 5). */
export const SettlementOutcome = z.enum(["completed", "failed", "aborted"]);
export type SettlementOutcome = z.infer<typeof SettlementOutcome>;

/**
 * Why a model request failed, for a workflow to route on (issue 10 rules). Each maps to one
 * `agent.fault.reason`: `context-overflow`, `bad-request`, `unknown-model` → `infra` (never
 * retried, never nudged); `unavailable`, `stream-cut` → `infra` once the retry bound is spent;
 * `output-limit` → `runaway` (two consecutive answers of one Submission cut at `maxTokens`);
 * `text-call` → `no-signal` (the model wrote its call as text; nudged with its own words);
 * `unparsable-output` → `no-signal` (the server could not read the model's output as a tool call
 * and said so inside the stream, llama-server's peg-format error; nudged once, issue 25 §13).
 * `tool-loop` → `runaway` (the same Working-tool call 5 times in a row, issue 25 §12).
 * `refusal-loop` → `runaway` (the refusal budget of a Submission spent, issue 25 §11).
 * `mcp-unavailable` → `infra` (an MCP server the Agent marks `required` was down when the
 * conversation started, issue 29).
 * `workspace-lost` → `infra` (the Turn's Repo-Slot Worktree is gone, issue 28 §6).
 * An older reader reads a cause it does not know as absent ({@link readFaultCause}).
 */
export const FaultCause = z.enum([
  "context-overflow",
  "bad-request",
  "unknown-model",
  "unavailable",
  "stream-cut",
  "output-limit",
  "text-call",
  "unparsable-output",
  "tool-loop",
  "refusal-loop",
  "mcp-unavailable",
  "workspace-lost",
]);
export type FaultCause = z.infer<typeof FaultCause>;

/**
 * Reads a cause tolerantly: a newer peer may add causes; an unknown one reads as absent, never
 * a failure of the message that carries it (§7.6).
 */
export function readFaultCause(raw: unknown): FaultCause | undefined {
  const parsed = FaultCause.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Typed error of a `failed` settlement: `type` is `provider`, `stream-incomplete`, `runaway`,
 * `surface`, …; `cause` (optional, a {@link FaultCause} string) says what a workflow may route
 * on. `cause` is a plain string on the wire so an unknown future cause never fails the event.
 */
export const SettlementError = z.object({
  type: z.string(),
  message: z.string(),
  cause: z.string().optional(),
});
export type SettlementError = z.infer<typeof SettlementError>;

/**
 * The usage fields a provider may leave out. On the Harness stream a field named in
 * `unreported` is sent as `0` so an Orchestrator older than this field still reads the event
 * (its reader requires numbers); every reader here turns it into `null` through
 * {@link readUsage}. See ADR-0400.
 */
export const UsageField = z.enum(["promptTokens", "cachedTokens", "completionTokens"]);
export type UsageField = z.infer<typeof UsageField>;

/** One event of a conversation's stream (§7.1): one discriminated union. */
export const StreamEvent = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("submission-started"),
    submissionId: z.string(),
    kind: z.enum(["task", "nudge"]),
  }),
  z.object({
    type: z.literal("message-appended"),
    submissionId: z.string(),
    role: z.enum(["user", "assistant", "toolResult"]),
    text: z.string(),
  }),
  z.object({
    type: z.literal("pick"),
    submissionId: z.string(),
    name: z.string(),
    toolCallId: z.string(),
    answer: PickAnswer.nullable(),
  }),
  z.object({
    type: z.literal("usage"),
    submissionId: z.string(),
    promptTokens: z.number().int().nonnegative(),
    cachedTokens: z.number().int().nonnegative(),
    completionTokens: z.number().int().nonnegative(),
    /** Fields the provider did not report (their number above is a placeholder `0`). */
    unreported: z.array(z.string()).optional(),
    /**
     * Fields the provider reported impossibly (`cachedTokens` over `promptTokens`): also named in
     * `unreported`, so an older reader shows `?` (issue 25 §6).
     */
    misreported: z.array(z.string()).optional(),
    /** The provider's finish reason of this model request, when it gave one. */
    finishReason: z.string().optional(),
  }),
  z.object({
    /**
     * A model request is retried or the endpoint is waited for (issue 10 §3): `attempt` counts
     * from 1; `waitMs` is the backoff before the next attempt; `cause` is `stream-cut` or
     * `unavailable`; `message` names the endpoint URL and model entry. An older Orchestrator
     * skips it (§7.6).
     */
    type: z.literal("retry"),
    submissionId: z.string(),
    model: z.string(),
    attempt: z.number().int().positive(),
    waitMs: z.number().int().nonnegative(),
    cause: z.string(),
    message: z.string(),
  }),
  /** One transcript entry of a Submission (issue 11; ADR-0257). An older Orchestrator skips it. */
  TranscriptStreamEvent,
  /** The messages a Submission added, byte-exact (issue 27). An older Orchestrator skips it. */
  HistoryStreamEvent,
  QueuedStreamEvent,
  z.object({
    /**
     * Something the operator must see on this Turn's feed (issue 26): the Working tools run
     * unsandboxed (`JR2_SANDBOX=off`) or reach the host's network (`network: "host"`). An older
     * Orchestrator skips it (§7.6).
     */
    type: z.literal("warning"),
    submissionId: z.string(),
    message: z.string(),
  }),
  z.object({
    type: z.literal("submission-settled"),
    submissionId: z.string(),
    outcome: SettlementOutcome,
    error: SettlementError.optional(),
    /**
     * The model's last answer wrote a tool call as text (Hermes `<tool_call>` markup in
     * `content`, no `tool_calls`): the Orchestrator nudges with the `text-call` notice.
     */
    textCall: z.boolean().optional(),
    /** `reasoning`: the markup was inside the reasoning (issue 25 §4); absent: in the content. */
    textCallWhere: z.enum(["reasoning"]).optional(),
    ...KvWaitField,
    /**
     * The Repo-Slot Worktree committed at settlement, whatever the outcome (issue 28 §3,
     * ADR-0219): `<workspace>/<slot>` → the branch's head. An older Orchestrator drops it.
     */
    commit: WorkspaceCommits.optional(),
  }),
]);
export type StreamEvent = z.infer<typeof StreamEvent>;

/** One model request's usage as every reader here sees it: `null` = the provider did not report it. */
export interface Usage {
  promptTokens: number | null;
  cachedTokens: number | null;
  completionTokens: number | null;
}

/**
 * Reads a stream `usage` event's numbers, turning each field named in `unreported` into
 * `null` (never 0: the cache hit rate is the number jr2 exists to protect, SPEC §14).
 */
export function readUsage(event: {
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  unreported?: readonly string[] | undefined;
}): Usage {
  const missing = new Set(event.unreported ?? []);
  return {
    promptTokens: missing.has("promptTokens") ? null : event.promptTokens,
    cachedTokens: missing.has("cachedTokens") ? null : event.cachedTokens,
    completionTokens: missing.has("completionTokens") ? null : event.completionTokens,
  };
}

/** `GET /models` on the Harness (authenticated): the model names of its table, never URLs or keys. */
export const ModelList = z.object({ models: z.array(z.object({ name: z.string() })) });
export type ModelList = z.infer<typeof ModelList>;

/** `GET /conversations/:iid/stream?offset=O&wait=S` 200 answer; 204 when nothing is new. */
export const StreamPage = z.object({ events: z.array(StreamEvent), nextOffset: z.string() });
export type StreamPage = z.infer<typeof StreamPage>;

export const StreamQuery = z.object({
  offset: z.string().default("0"),
  wait: z.coerce.number().min(0).max(60).default(0),
});
export type StreamQuery = z.infer<typeof StreamQuery>;

/** `POST /conversations/:iid/abort` answer (never 404). */
export const AbortAnswer = z.object({ aborted: z.boolean() });
export type AbortAnswer = z.infer<typeof AbortAnswer>;

/** `GET /conversations/:iid/history` answer: messages as pi holds them, and every settlement. */
export const History = z.object({
  messages: z.array(z.unknown()),
  settlements: z.array(
    z.object({
      submissionId: z.string(),
      outcome: SettlementOutcome,
      error: SettlementError.optional(),
      /** As on the stream's settlement: the last answer wrote a tool call as text. */
      textCall: z.boolean().optional(),
      textCallWhere: z.enum(["reasoning"]).optional(),
    }),
  ),
});
export type History = z.infer<typeof History>;

/**
 * Reads one stream event tolerantly: a newer Harness may add event types; an unknown type is
 * skipped (`undefined`), never a failure of the whole page (§7.6).
 */
export function readStreamEvent(raw: unknown): StreamEvent | undefined {
  const parsed = StreamEvent.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}
