/**
 * Operator controls of issue 13: a run's saved history (its versions), forking a run from a
 * version, retrying a faulted Turn and resuming a drifted run — the bodies and answers of
 * their routes. Each block below belongs to one control.
 * @see SPEC §8, ADR-0270
 */
import { z } from "zod";
import { RunStatus, UsageTotals } from "./runs.js";

// ── History and fork (ADR-0270) ─────────────────────────────────────────────────────────

/** Who asked for a control: the `x-jr2-client` header (`cli`, `console`; anything else `http`). */
export const ControlClient = z.enum(["cli", "http", "console"]);
export type ControlClient = z.infer<typeof ControlClient>;

/**
 * Why a version of a run was saved (ADR-0270): the pick (`child` = `<state path>#<agent>`,
 * never an iid), the Gate answer, the timer (`after` = xstate's delayed event), a fault, the
 * run's start, a cancel, its settling (`settled`, any other outcome), a Turn's admission
 * (a ledger write), a fork (`from`: the source version), or any other save (`step`).
 */
export const VersionCause = z.discriminatedUnion("kind", [
  /** The run's start; `by` when an operator's retry started it again from its input (ADR-0272). */
  z.object({ kind: z.literal("start"), by: ControlClient.optional() }),
  z.object({ kind: z.literal("pick"), child: z.string(), agent: z.string(), name: z.string() }),
  z.object({ kind: z.literal("gate"), gate: z.string(), event: z.string(), by: ControlClient }),
  z.object({ kind: z.literal("timer"), after: z.string() }),
  z.object({ kind: z.literal("fault"), reason: z.string(), child: z.string().optional() }),
  z.object({ kind: z.literal("cancel") }),
  z.object({ kind: z.literal("settled"), status: RunStatus }),
  z.object({ kind: z.literal("admission"), child: z.string(), agent: z.string() }),
  z.object({
    kind: z.literal("fork"),
    from: z.object({ runId: z.string(), version: z.number().int().positive() }),
    by: ControlClient,
  }),
  z.object({ kind: z.literal("step") }),
  // An operator's resume of the drifted run, and retry of its faulted Turn `child` from version `from` (ADR-0271).
  z.object({ kind: z.literal("resume"), by: ControlClient }),
  z.object({
    kind: z.literal("retry"),
    child: z.string(),
    from: z.number().int().positive(),
    by: ControlClient,
  }),
]);
export type VersionCause = z.infer<typeof VersionCause>;

/** One saved version as `GET /runs/:runId/history` lists it (no snapshot). `at`: ISO-8601. */
export const RunVersionSummary = z.object({
  version: z.number().int().positive(),
  at: z.string(),
  /** The run root's state value in that version. */
  value: z.unknown(),
  status: RunStatus,
  cause: VersionCause,
  /**
   * Reserved (issue 22, for the Repo Slots issue): the commit id of each Repo Slot's Worktree
   * in that version, by slot name. Absent today; never changed by compaction.
   */
  workspace: z.record(z.string(), z.string()).optional(),
});
export type RunVersionSummary = z.infer<typeof RunVersionSummary>;

/**
 * `GET /runs/:runId/history`: the run's kept versions, oldest first. `workspaces` (ADR-0228):
 * the workspaces its workflow declares, each with its Repo Slots' names (`[]` = a plain
 * workspace), so a fork's confirmation says where its files start; absent from an older
 * Orchestrator or when the workflow is no longer served.
 */
export const RunHistory = z.object({
  runId: z.string(),
  versions: z.array(RunVersionSummary),
  workspaces: z.array(z.object({ name: z.string(), slots: z.array(z.string()) })).optional(),
});
export type RunHistory = z.infer<typeof RunHistory>;

/**
 * `GET /runs/:runId/history/:version`: the version whole — its xstate snapshot as stored, the
 * context and state value, its timers (`dueAt` epoch ms) and its ledger in summary (one Turn
 * per iid: where it ran, never the stream URL).
 */
export const RunVersion = RunVersionSummary.extend({
  runId: z.string(),
  workflow: z.string(),
  machineFingerprint: z.string(),
  snapshot: z.unknown(),
  context: z.unknown(),
  timers: z.array(z.object({ id: z.string(), event: z.unknown(), delay: z.number(), dueAt: z.number() })),
  ledger: z.array(z.object({ iid: z.string(), turnId: z.string().nullable(), child: z.string().optional() })),
  epochs: z.record(z.string(), z.number()),
  usage: UsageTotals,
});
export type RunVersion = z.infer<typeof RunVersion>;

/**
 * `POST /runs/:runId/fork` body: the version to fork from, and an optional JSON merge patch
 * (RFC 7396) applied to that version's context before the fork starts.
 */
export const ForkRequest = z.object({
  at: z.number().int().positive(),
  context: z.record(z.string(), z.unknown()).optional(),
});
export type ForkRequest = z.infer<typeof ForkRequest>;

/** `POST /runs/:runId/fork` answer (201): the new run and where it came from. */
export const ForkAnswer = z.object({
  runId: z.string(),
  forkedFrom: z.object({ runId: z.string(), version: z.number().int().positive() }),
  /**
   * Always true: a plain workspace's directory is a new, empty one under the fork's runId. Kept
   * for older readers; Repo Slots are not empty (see `repos`).
   */
  workspaceEmpty: z.literal(true),
  /**
   * The fork's Repo Slots (issue 28), `<workspace>/<slot>` → the commit its Worktree was checked
   * out at (the version's). Absent when the run has none; an older reader ignores it.
   */
  repos: z.record(z.string(), z.string()).optional(),
  /**
   * The fork's plain workspaces (no Repo Slot), by name (ADR-0228): each one's directory starts
   * empty. `[]` when every workspace has Repo Slots; absent from an older Orchestrator.
   */
  plainWorkspaces: z.array(z.string()).optional(),
});
export type ForkAnswer = z.infer<typeof ForkAnswer>;

// ── end of history and fork ─────────────────────────────────────────────────────────────

// ── Resume a drifted run and retry a faulted Turn (ADR-0271) ──────────────────────────────

/**
 * `POST /runs/:runId/resume` body. Without `acceptDrift: true` nothing is changed: the answer
 * is the plan (a dry run). `acceptDrift: true` restores the run against the Machine served now.
 */
export const ResumeRequest = z.strictObject({ acceptDrift: z.boolean().optional() });
export type ResumeRequest = z.infer<typeof ResumeRequest>;

/**
 * One state a drifted run's snapshot is in: `machine` is the Machine's path below the run
 * (`""` = the workflow's own, `working/body` = a `workspace()` body), `state` its dotted path.
 */
export const ResumeState = z.object({ machine: z.string(), state: z.string(), present: z.boolean() });
export type ResumeState = z.infer<typeof ResumeState>;

/**
 * One Agent's Menu, saved against served: `changed` when its bytes differ (or were not saved:
 * a run saved before ADR-0271 counts as changed). A changed Agent's conversations move to a new
 * one on resume; `moved` lists the live Turns (their `<state path>#<agent>`) admitted again.
 */
export const ResumeMenu = z.object({
  machine: z.string(),
  agent: z.string(),
  changed: z.boolean(),
  why: z.enum(["bytes-differ", "not-saved", "added", "removed", "unchanged"]),
});
export type ResumeMenu = z.infer<typeof ResumeMenu>;

/**
 * What resuming a drifted run does (the dry run) or did (`resumed: true`). `resumable` is false
 * when a state of `states` is not `present` in the served Machine (the refusal names each).
 */
export const ResumeAnswer = z.object({
  runId: z.string(),
  workflow: z.string(),
  /** The run's status after the call: still `drifted` on a dry run, `running` once resumed. */
  status: RunStatus,
  resumed: z.boolean(),
  resumable: z.boolean(),
  /** The saved and the served fingerprint of each Machine (path → sha256), where they differ. */
  machines: z.array(
    z.object({ machine: z.string(), saved: z.string().nullable(), served: z.string().nullable() }),
  ),
  states: z.array(ResumeState),
  menus: z.array(ResumeMenu),
  /** Live Turns moved onto a new conversation (their `<state path>#<agent>`). */
  moved: z.array(z.string()),
  /** The `resumed` event's seq on the run's log (a follower reads on from it); null on a dry run. */
  seq: z.number().int().nullable(),
});
export type ResumeAnswer = z.infer<typeof ResumeAnswer>;

/**
 * `POST /runs/:runId/retry` body. A Turn fault is retried as it is asked; a run faulted by its
 * Machine (ADR-0272) only with `confirm` (else the answer is the plan, nothing changed), and only
 * once its workflow's source changed since it faulted — or with `force`. Both optional: `{}` is
 * what a CLI before them sends.
 */
export const RetryRequest = z.strictObject({
  confirm: z.boolean().optional(),
  force: z.boolean().optional(),
});
export type RetryRequest = z.infer<typeof RetryRequest>;

/**
 * The retry of a run faulted by its Machine (ADR-0272): the fault's `reason`; `from` — the run's
 * stored input (the fault was in its initial macrostep) or the version restored, the newest saved
 * before the faulting macrostep; `event` — what that macrostep handled, in words, delivered
 * again; `newConversations` — the Turns (`<state path>#<agent>`) admitted on a new conversation
 * (`*` every Turn: the run starts again); the workflow module's sha256 it faulted under and the
 * one served.
 */
export const MachineFaultRetry = z.object({
  reason: z.string(),
  from: z.union([z.literal("input"), z.number().int().positive()]),
  event: z.string().optional(),
  newConversations: z.array(z.string()),
  sourceDigest: z.object({ faulted: z.string().nullable(), served: z.string().nullable() }),
});
export type MachineFaultRetry = z.infer<typeof MachineFaultRetry>;

/**
 * What a retry did: the faulted Turn (`child`, `<state path>#<agent>`) admitted again with a new
 * `turnId`, the run set back to the state before its fault (`fromVersion`: the saved version it
 * was set back to, or null where versions are not kept) and running again under its runId.
 */
export const RetryAnswer = z.object({
  runId: z.string(),
  status: RunStatus,
  child: z.string(),
  turnId: z.string(),
  fromVersion: z.number().int().nullable(),
  value: z.unknown(),
  /** The `retried` event's seq on the run's log: a follower reads on from it. */
  seq: z.number().int(),
  /** A run faulted by its Machine: how it was retried (ADR-0272); absent for a Turn fault. */
  machineFault: MachineFaultRetry.optional(),
});
export type RetryAnswer = z.infer<typeof RetryAnswer>;

// ── end of resume and retry ───────────────────────────────────────────────────────────────
