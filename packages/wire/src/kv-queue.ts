import { z } from "zod";

/**
 * KV scheduling on the wire (issue 30 §2; docs/adr/0430-kv-scheduling.md), in its own file:
 * - the `queued` stream event: a model request of this Submission waits for its conversation's
 *   place in the endpoint's working set — `position` (1-based) in the endpoint's queue and
 *   `reason` in words. One per waiting request. An older Orchestrator skips it (§7.6);
 * - `kvWaitMs` on `submission-settled`: how long the Submission's requests waited in all (ms),
 *   absent when they never waited. An older Orchestrator ignores the field.
 */
export const QueuedStreamEvent = z.object({
  type: z.literal("queued"),
  submissionId: z.string(),
  position: z.number().int().positive(),
  reason: z.string(),
});
export type QueuedStreamEvent = z.infer<typeof QueuedStreamEvent>;

/** The optional field spread into `submission-settled` (harness.ts). */
export const KvWaitField = { kvWaitMs: z.number().int().nonnegative().optional() };

/**
 * The run feed's `queued` line (without the feed's `seq`/`at`, added in run-feed.ts): a model
 * request of the Turn `child` waits for the KV working set (`position`, `reason`), or — with
 * `waitedMs` alone — the Turn's Submission settled having waited that long in all. No iid (§5.6).
 */
export const QueuedFeedFields = {
  type: z.literal("queued"),
  child: z.string(),
  position: z.number().int().positive().optional(),
  reason: z.string().optional(),
  waitedMs: z.number().int().nonnegative().optional(),
};
