import { z } from "zod";
import { PickAnswer } from "./picks.js";
import { ThinkingLevel, WorkspaceAccess } from "./tool.js";

/** The Agent definition that rides every admission (the Harness holds no roster, §7.1). */
export const AgentDefinition = z.object({
  model: z.string().min(1),
  instructions: z.string(),
  workspace: WorkspaceAccess,
  thinkingLevel: ThinkingLevel.optional(),
});
export type AgentDefinition = z.infer<typeof AgentDefinition>;

/**
 * A structured notice the Harness renders into the Turn part (one line each, §7.3).
 * `conversation-new`: the conversation was lost and this is a new one (§5.3);
 * `pick-answer`: the answer to a pick the model did not get to read (§5.6);
 * `readmitted`: the Turn was cut by a Harness restart and is admitted again.
 */
export const Notice = z.discriminatedUnion("type", [
  z.object({ type: z.literal("conversation-new") }),
  z.object({ type: z.literal("pick-answer"), pick: z.string(), answer: PickAnswer }),
  z.object({ type: z.literal("readmitted") }),
]);
export type Notice = z.infer<typeof Notice>;

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

/** Typed error of a `failed` settlement: `provider`, `stream-incomplete`, `runaway`, `surface`, … */
export const SettlementError = z.object({ type: z.string(), message: z.string() });
export type SettlementError = z.infer<typeof SettlementError>;

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
  }),
  z.object({
    type: z.literal("submission-settled"),
    submissionId: z.string(),
    outcome: SettlementOutcome,
    error: SettlementError.optional(),
  }),
]);
export type StreamEvent = z.infer<typeof StreamEvent>;

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
    z.object({ submissionId: z.string(), outcome: SettlementOutcome, error: SettlementError.optional() }),
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
