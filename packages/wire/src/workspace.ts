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
  /**
   * The commits base..head, newest first (at most 100); `time` the author date (ISO-8601,
   * absent from an older Harness). Absent from an older Harness.
   */
  commits: z
    .array(
      z.object({ commit: CommitId, author: z.string(), subject: z.string(), time: z.string().optional() }),
    )
    .optional(),
  /** How many commits base..head holds in all (`commits` shows the newest 100). Absent from an older Harness. */
  commitsTotal: z.number().int().nonnegative().optional(),
  /**
   * The branch or tag the base was taken from (the slot's `ref`, or the remote's default branch
   * when none was given); absent when the base was a bare commit or from an older Harness.
   */
  baseRef: z.string().optional(),
  /** The slot's URL, any credential redacted (ADR-0213). Absent from an older Harness. */
  url: z.string().optional(),
});
export type DiffAnswer = z.infer<typeof DiffAnswer>;

/**
 * The run's summary handed to the publish hook (ADR-0226): a title line and a text a pull
 * request can use as its body. Model-written text may be in it: the hook gets it as data
 * (environment and stdin), never in its command line.
 */
export const PublishSummary = z.object({
  workflow: Name,
  title: z.string().max(256),
  text: z.string().max(16_384),
  /**
   * The workspace body's final state whose `meta: { publish: true }` pushed (dotted, e.g.
   * `approved`). Optional: an older Orchestrator does not send it, an older Harness drops it.
   */
  finalState: z.string().max(512).optional(),
  /**
   * The last pick delivered before the publish — the one that ended the body (e.g. the
   * reviewer's `approve`): its Agent, its name and the state it was picked in. Optional, as
   * `finalState`; absent when no pick was delivered (a Gate answer ended the body).
   */
  pick: z
    .object({ agent: z.string().max(256), name: z.string().max(256), state: z.string().max(512).optional() })
    .optional(),
});
export type PublishSummary = z.infer<typeof PublishSummary>;

/**
 * `POST /workspaces/push`: push the run's branch to the slot's `pushUrl` or `url`; `summary`
 * (optional, dropped by an older Harness) is what the publish hook gets.
 */
export const PushRequest = SlotRef.extend({ summary: PublishSummary.optional() });
export type PushRequest = z.infer<typeof PushRequest>;

/**
 * What the operator's publish hook (`JR2_PUBLISH_HOOK`, ADR-0226) did after a successful push:
 * its exit status (null when killed: `signal`, `timedOut`), how long it ran, the last lines of
 * its output (stdout and stderr merged, bounded), and the last `http(s)://` URL it printed on
 * stdout (e.g. the pull request `gh pr create` made) — its result only when it exited 0 in time
 * ({@link hookView}). A failing hook does not fail the push.
 */
export const HookResult = z.object({
  exit: z.number().int().nullable(),
  signal: z.string().optional(),
  timedOut: z.boolean(),
  ms: z.number().int().nonnegative(),
  tail: z.array(z.string()),
  url: z.string().optional(),
});
export type HookResult = z.infer<typeof HookResult>;

/** A publish hook's result in words (ADR-0226, ADR-0290): what `jr2 show`, `jr2 follow` and the console say. */
export interface HookView {
  /** Exit 0 within its time: only then is the URL it printed its result. */
  ok: boolean;
  /** `exit 0`, `exit 1`, `timed out (killed)`, `killed by SIGTERM`. */
  status: string;
  /** A failed hook's first output line that is not a bare URL (absent: it printed none); unescaped. */
  firstLine?: string;
  /** The URL it printed, only when it succeeded. */
  url?: string;
}

/** A bare URL line: what a hook prints as its result (the Harness takes the last one, ADR-0226). */
const HOOK_URL_LINE = /^\s*https?:\/\/\S+\s*$/;

/**
 * {@link HookView} of a hook result. A failed hook's URL is no result (`gh pr create` may print
 * the pull request, then fail on a label), so its reason is its first line that is not a URL. Pure.
 */
export function hookView(hook: HookResult): HookView {
  const ok = hook.exit === 0 && !hook.timedOut;
  const status = hook.timedOut
    ? "timed out (killed)"
    : hook.exit === null
      ? `killed by ${hook.signal ?? "a signal"}`
      : `exit ${hook.exit}`;
  if (ok) return { ok, status, ...(hook.url ? { url: hook.url } : {}) };
  const firstLine = hook.tail.find((l) => !HOOK_URL_LINE.test(l));
  return { ok, status, ...(firstLine ? { firstLine } : {}) };
}

/** What the remote now holds (the URL with any credential redacted), and the hook's result if one ran. */
export const PushAnswer = z.object({
  branch: z.string(),
  commit: CommitId,
  url: z.string(),
  hook: HookResult.optional(),
});
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

/** One commit of a branch view: id, subject, author, author time (ISO-8601, absent when unknown). */
const BranchCommit = z.object({
  commit: z.string(),
  subject: z.string(),
  author: z.string(),
  time: z.string().optional(),
});

/**
 * `GET /runs/:runId/repos` (the Orchestrator, ADR-0225): a run's Repo Slots as a branch view for
 * `jr2 show` and the console. Per slot: where and on what branch, the URL (credentials redacted),
 * the base, the newest commit its versions recorded, what publish pushed and the hook's result,
 * the forge link (or why there is none) and, read from the Harness (`source: "harness"`), the
 * commits on the branch (the newest 50, `moreCommits` the rest) and a diffstat (the first 50
 * files, `moreFiles` the rest). When the Harness cannot answer (down, too old, the Worktree's
 * repository swept), `source: "log"`: the commits the run's versions recorded, and
 * `unavailable` says why.
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
      /** The branch or tag the base came from, when known. */
      baseRef: z.string().optional(),
      /** The slot's URL, credentials redacted (absent for a run recorded before it was kept). */
      url: z.string().optional(),
      head: z.string().optional(),
      pushed: z.object({ commit: z.string(), url: z.string() }).optional(),
      /** What the publish hook did after the push (ADR-0226). */
      hook: HookResult.optional(),
      /** The forge page of the branch (`JR2_FORGE_URL_TEMPLATE`), or why there is none. */
      link: z.string().optional(),
      noLink: z.string().optional(),
      /** Where `commits` and the diffstat came from. */
      source: z.enum(["harness", "log"]).optional(),
      summary: z.string().optional(),
      stat: z
        .object({
          files: z.number().int().nonnegative(),
          insertions: z.number().int().nonnegative(),
          deletions: z.number().int().nonnegative(),
        })
        .optional(),
      files: DiffAnswer.shape.files.optional(),
      moreFiles: z.number().int().nonnegative().optional(),
      commits: z.array(BranchCommit).optional(),
      moreCommits: z.number().int().nonnegative().optional(),
      /** `source: "log"`: the commit each version recorded for this slot, where it changed. */
      versions: z
        .array(z.object({ version: z.number().int(), commit: z.string(), cause: z.string() }))
        .optional(),
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
