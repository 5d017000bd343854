import { z } from "zod";

/**
 * Repo Slots on the wire (issue 28, ADR-0210): the Harness's authenticated `/workspaces/*`
 * routes (the Orchestrator asks, the Harness runs git; the Orchestrator never touches the work
 * root), and the optional `commit` a pick and a settlement carry. Tolerant both ways: an older
 * Orchestrator's `PickRequest` strips `commit` (z.object drops unknown keys); an older Harness
 * answers 404 on attach, which the Orchestrator turns into `JR2_ERR_WORKSPACE_HARNESS_TOO_OLD`.
 */

/** A git commit id (SHA-1 or SHA-256, lower-case hex). */
export const CommitId = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, "a full lower-case commit id");
export type CommitId = z.infer<typeof CommitId>;

const Name = z.string().min(1).max(128);

/** Which slot of which run: `runId`, the workspace's name, the slot's name. */
export const SlotRef = z.object({ runId: Name, workspace: Name, slot: Name });
export type SlotRef = z.infer<typeof SlotRef>;

/** `POST /workspaces/attach`: ensure the mirror, make the run's repository and Worktree. */
export const AttachRequest = SlotRef.extend({
  workflow: Name,
  /** The slot's URL, resolved once by the registrar from the run's input. */
  url: z.string().min(1).max(4096),
  /** Branch, tag or commit to start from (default the remote's HEAD). */
  ref: z.string().min(1).max(256).optional(),
  /** Where publish pushes, when not `url`. */
  pushUrl: z.string().min(1).max(4096).optional(),
  /**
   * Submodules at the start commit (ADR-0216): `"skip"` (default) leaves each as an empty
   * directory, as `git clone` without `--recurse-submodules` does; `"refuse"` fails the attach
   * with `JR2_ERR_WORKSPACE_SUBMODULES_REFUSED` naming them. jr2 never checks a submodule out.
   * An older Harness drops the field (it skips).
   */
  submodules: z.enum(["skip", "refuse"]).optional(),
});
export type AttachRequest = z.infer<typeof AttachRequest>;

/** A slot as the body sees it: `{ path, branch, base }` plus the branch's head now. */
export const SlotHandle = z.object({
  path: z.string(),
  branch: z.string(),
  base: CommitId,
  commit: CommitId,
  /** Submodule paths at the base left empty (`submodules: "skip"`, ADR-0216); absent: none, or an older Harness. */
  submodules: z.array(z.string()).optional(),
});
export type SlotHandle = z.infer<typeof SlotHandle>;

/** `POST /workspaces/commit`: commit the Worktree if it changed. */
export const CommitRequest = SlotRef.extend({
  agent: Name,
  state: z.string().min(1).max(1024),
  pick: z.string().min(1).max(200).optional(),
});
export type CommitRequest = z.infer<typeof CommitRequest>;

/**
 * The branch's head after the commit, and whether a commit was made. `skipped`: nested git
 * repositories in the Worktree that were left out of the commit (ADR-0211; absent from an older Harness).
 */
export const CommitAnswer = z.object({
  commit: CommitId,
  created: z.boolean(),
  skipped: z.array(z.string()).optional(),
});
export type CommitAnswer = z.infer<typeof CommitAnswer>;

/**
 * `POST /workspaces/checkout-at`: a retry (`from` absent: reset the run's own branch) or a fork
 * (`from` the source run's slot: a new repository and branch for `runId`) at `commit`.
 */
export const CheckoutAtRequest = SlotRef.extend({
  workflow: Name,
  commit: CommitId,
  from: SlotRef.optional(),
});
export type CheckoutAtRequest = z.infer<typeof CheckoutAtRequest>;

/** `POST /workspaces/diff`: the committed diff base..head, bounded (`maxBytes` ≤ the Harness's). */
export const DiffRequest = SlotRef.extend({ maxBytes: z.number().int().min(1024).optional() });
export type DiffRequest = z.infer<typeof DiffRequest>;

/** The diff, its size, whether it was cut, and a diffstat. */
export const DiffAnswer = z.object({
  base: CommitId,
  head: CommitId,
  text: z.string(),
  cut: z.boolean(),
  bytes: z.number().int().nonnegative(),
  summary: z.string(),
  files: z.array(z.object({ path: z.string(), added: z.number().int(), removed: z.number().int() })),
  /** The commits base..head, newest first (at most 100). Absent from an older Harness. */
  commits: z.array(z.object({ commit: CommitId, author: z.string(), subject: z.string() })).optional(),
});
export type DiffAnswer = z.infer<typeof DiffAnswer>;

/** `POST /workspaces/push`: push the run's branch to the slot's `pushUrl` or `url`. */
export const PushRequest = SlotRef;
export type PushRequest = z.infer<typeof PushRequest>;

/** What the remote now holds (the URL with any credential redacted). */
export const PushAnswer = z.object({ branch: z.string(), commit: CommitId, url: z.string() });
export type PushAnswer = z.infer<typeof PushAnswer>;

/** `POST /workspaces/remove`: rescue, then remove a run's Worktrees (one workspace or slot, or all). */
export const RemoveRequest = z.object({ runId: Name, workspace: Name.optional(), slot: Name.optional() });
export type RemoveRequest = z.infer<typeof RemoveRequest>;

/** The Worktrees removed. */
export const RemoveAnswer = z.object({ removed: z.array(z.string()) });
export type RemoveAnswer = z.infer<typeof RemoveAnswer>;

/**
 * The optional `commit` a pick and a settlement carry (issue 28 §3): the Worktree's head after
 * the Harness committed it, recorded in the version the pick (or the fault) makes. Keyed by
 * `<workspace>/<slot>`.
 */
export const WorkspaceCommits = z.record(z.string().max(257), CommitId);
export type WorkspaceCommits = z.infer<typeof WorkspaceCommits>;

/**
 * `GET /runs/:runId/repos` (the Orchestrator): a run's Repo Slots for `jr2 show` — branch, base,
 * the newest commit its versions recorded, what publish pushed, and (asked of the Harness) the
 * commits and a diffstat; `unavailable` says why those could not be read.
 */
export const RunRepos = z.object({
  runId: z.string(),
  repos: z.array(
    z.object({
      workspace: z.string(),
      slot: z.string(),
      path: z.string(),
      branch: z.string(),
      base: z.string(),
      head: z.string().optional(),
      pushed: z.object({ commit: z.string(), url: z.string() }).optional(),
      summary: z.string().optional(),
      files: DiffAnswer.shape.files.optional(),
      commits: DiffAnswer.shape.commits,
      unavailable: z.string().optional(),
    }),
  ),
});
export type RunRepos = z.infer<typeof RunRepos>;

/**
 * `GET /runs/:runId/settled` (the Orchestrator, instance or sandbox token): what the store knows
 * of a run, for the Harness's Worktree clean-up (issue 28 §6) — `running` (or drifted: keep),
 * `settled` with `settledAt` (ISO-8601, its last update), or `deleted` (no such run). Clean-up
 * removes only on `settled` past `JR2_WORKTREE_KEEP` or `deleted`; no answer removes nothing.
 */
export const RunSettledAnswer = z.object({
  runId: z.string(),
  state: z.enum(["running", "settled", "deleted"]),
  settledAt: z.string().optional(),
});
export type RunSettledAnswer = z.infer<typeof RunSettledAnswer>;
