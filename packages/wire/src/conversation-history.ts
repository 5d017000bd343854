import { z } from "zod";

/**
 * A conversation's durable history on the wire (issue 27, ADR-0175): the byte-exact message
 * JSON the Harness replays, per Submission, with a running sha256; the `history` field an
 * Orchestrator may push on a `kept` admission when the Harness lost the conversation; and the
 * `harness-restarted` settlement a restarted Harness gives the Submission that ran at the restart.
 * Both are optional on the wire: an older Harness drops `history` (its schema strips unknown
 * keys) and takes the task path; an older Orchestrator reads `harness-restarted` as any `failed`.
 * @see SPEC §5.6, §7.1; docs/adr/0175-harness-durable-state.md
 */

/** `SettlementError.type` of a Submission that ran (or waited) when its Harness restarted. */
export const HARNESS_RESTARTED = "harness-restarted";

/**
 * One Submission's messages as the Harness replays them: `messages` is a JSON array text,
 * kept byte for byte; `sha256` is the running hash after it: sha256(previous hex ‖ "\n" ‖ its
 * messages as UTF-8), starting from sha256("") (the Harness's `conversations/store/history-hash.ts`;
 * not computed here so the console's bundle needs no `node:crypto`).
 */
export const HistorySubmission = z.object({
  submissionId: z.string().min(1),
  messages: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type HistorySubmission = z.infer<typeof HistorySubmission>;

/** The `history` field of an admission: every Submission of the conversation, in order. */
export const ConversationHistory = z.object({
  submissions: z.array(HistorySubmission).max(100_000),
});
export type ConversationHistory = z.infer<typeof ConversationHistory>;

/**
 * The `history` stream event (issue 27): when a Submission's run ends, the messages the
 * Harness added since its last `history` event, as one JSON array text with the running
 * sha256 — what the Orchestrator keeps to push back as `history` if the Harness loses the
 * conversation. An older Orchestrator skips it (§7.6).
 */
export const HistoryStreamEvent = z.object({
  type: z.literal("history"),
  submissionId: z.string(),
  messages: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type HistoryStreamEvent = z.infer<typeof HistoryStreamEvent>;
