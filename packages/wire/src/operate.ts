/**
 * Operator controls over a run (issue 13): the request and answer shapes of its routes. One
 * block per control; the saved history and fork live beside these in their own block.
 * @see docs/adr/0271-resume-and-retry.md
 */
import { z } from "zod";
import { RunStatus } from "./runs.js";

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
});
export type ResumeAnswer = z.infer<typeof ResumeAnswer>;

/** `POST /runs/:runId/retry` body: nothing to say yet (the run's last fault is retried). */
export const RetryRequest = z.strictObject({});
export type RetryRequest = z.infer<typeof RetryRequest>;

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
});
export type RetryAnswer = z.infer<typeof RetryAnswer>;

// ── end of resume and retry ───────────────────────────────────────────────────────────────
