import { z } from "zod";
import { WorkspaceCommits } from "./workspace.js";

/** A key string with no U+0000 in it: PostgreSQL's text cannot hold NUL (ADR-0280). */
const keyString = () =>
  z
    .string()
    .min(1)
    .max(512)
    .refine((s) => !s.includes("\0"), "must not contain a NUL character (U+0000)");

/**
 * `POST /agents/:iid/picks` body: one pick, keyed for idempotency by the model's tool-call id
 * within its Turn. `arguments` is the model's parsed arguments object (the Orchestrator
 * validates it, §4.3 step 5). `turnId` is the turnId of the Submission the pick belongs to
 * (§5.4): with it, a repeat is matched to its own Turn even after the next Turn of a continued
 * conversation registered the same iid, and a pick of an ended Turn answers 404. Optional: an
 * older Harness omits it and gets the per-iid lookup (ADR-0252).
 * @see SPEC §4.3, §5.4
 */
export const PickRequest = z.object({
  name: z.string().min(1).max(200),
  arguments: z.unknown().optional(),
  toolCallId: keyString(),
  turnId: keyString().optional(),
  /**
   * The Worktree commits the Harness made just before posting this pick, by `<workspace>/<slot>`
   * (issue 28 §3, workspace.ts): recorded in the pick's version. An older Orchestrator drops it.
   */
  commit: WorkspaceCommits.optional(),
});
export type PickRequest = z.infer<typeof PickRequest>;

/** Why a pick never reached the Machine (§4.3 steps 2, 3, 5). */
export const PickRefusal = z.enum(["busy", "off-menu", "invalid-arguments"]);
export type PickRefusal = z.infer<typeof PickRefusal>;

/** One failing field of a pick's arguments: zod's issue, reduced to what a model can act on. */
export const PickIssue = z.object({
  path: z.array(z.union([z.string(), z.number()])),
  message: z.string(),
  code: z.string().optional(),
});
export type PickIssue = z.infer<typeof PickIssue>;

/**
 * The answer to a pick (§4.3): `delivered` is false for every answer that did not reach the
 * Machine; `moved` whenever it is known; `turnComplete` by registration identity; `allowed`
 * read after the delivery (`[]` once the Turn is over).
 */
export const PickAnswer = z.object({
  delivered: z.boolean(),
  moved: z.boolean().optional(),
  turnComplete: z.boolean(),
  allowed: z.array(z.string()),
  refusal: PickRefusal.optional(),
  issues: z.array(PickIssue).optional(),
});
export type PickAnswer = z.infer<typeof PickAnswer>;

/**
 * A PickAnswer as read from a possibly older Orchestrator (§7.6): absent `moved` stays
 * absent (it is not `false`), absent `allowed` is `undefined` (it is not empty).
 */
export interface TolerantPickAnswer {
  delivered: boolean;
  moved: boolean | undefined;
  turnComplete: boolean;
  allowed: string[] | undefined;
  refusal: PickRefusal | undefined;
  issues: PickIssue[] | undefined;
}

const LoosePickAnswer = z
  .object({
    delivered: z.boolean().optional(),
    moved: z.boolean().optional(),
    turnComplete: z.boolean().optional(),
    allowed: z.array(z.string()).optional(),
    refusal: z.string().optional(),
    issues: z.array(z.looseObject({ path: z.array(z.unknown()).optional(), message: z.string() })).optional(),
  })
  .loose();

/**
 * Reads a pick answer tolerantly (§7.6). Unknown refusal kinds are kept out (treated as a
 * plain non-move) rather than failing the read; a missing `delivered` counts as delivered
 * unless a refusal is present, as an older Orchestrator only answered delivered picks.
 * @returns the answer, or `undefined` when the body is not an object at all.
 */
export function readPickAnswer(body: unknown): TolerantPickAnswer | undefined {
  const parsed = LoosePickAnswer.safeParse(body);
  if (!parsed.success) return undefined;
  const b = parsed.data;
  const refusal = PickRefusal.safeParse(b.refusal);
  return {
    delivered: b.delivered ?? b.refusal === undefined,
    moved: b.moved,
    turnComplete: b.turnComplete ?? false,
    allowed: b.allowed,
    refusal: refusal.success ? refusal.data : undefined,
    issues: b.issues?.map((i) => ({
      path: (i.path ?? []).filter(
        (p): p is string | number => typeof p === "string" || typeof p === "number",
      ),
      message: i.message,
    })),
  };
}
