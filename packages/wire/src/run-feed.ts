/**
 * The run feed's events (`GET /runs/:runId/events`, SSE; SPEC §4.1, §14): one discriminated
 * union, apart from the run routes' shapes in runs.ts so each file stays one concern.
 */
import { z } from "zod";
import { QueuedFeedFields } from "./kv-queue.js";
import { Gate, RunOutcome, RunStatus } from "./runs.js";
import { HookResult } from "./workspace.js";

const feedBase = { seq: z.number().int().nonnegative(), at: z.string() };

/**
 * One event of the run feed `GET /runs/:runId/events` (SSE, `event: <type>`, `data: <json>`).
 * `child` names a Turn as `<state path>#<agent>` — never an iid: the feed is open
 * observation (§5.6).
 */
export const RunFeedEvent = z.discriminatedUnion("type", [
  z.object({
    ...feedBase,
    type: z.literal("status"),
    status: RunStatus,
    value: z.unknown(),
    reason: z.string().optional(),
    /** On the status that settles the run: how it ended (ADR-0062). */
    outcome: RunOutcome.optional(),
    /** Who asked, on a status an operator caused (a drifted run cancelled, issue 22); as `gate-answered`'s. */
    by: z.enum(["cli", "http", "console"]).optional(),
  }),
  z.object({
    ...feedBase,
    type: z.literal("admission"),
    child: z.string(),
    agent: z.string(),
    kind: z.enum(["task", "nudge"]),
    allowed: z.array(z.string()),
  }),
  z.object({
    ...feedBase,
    type: z.literal("pick"),
    child: z.string(),
    agent: z.string(),
    name: z.string(),
    /** The pick's arguments as the Harness sent them (absent in an event stored before they were carried). */
    arguments: z.unknown().optional(),
    answer: z.unknown(),
  }),
  z.object({
    ...feedBase,
    type: z.literal("usage"),
    child: z.string(),
    /** `null`: the provider did not report it (never 0, SPEC §14). */
    promptTokens: z.number().nullable(),
    cachedTokens: z.number().nullable(),
    completionTokens: z.number().nullable(),
    finishReason: z.string().optional(),
  }),
  z.object({
    ...feedBase,
    /**
     * A model request retried, or the model endpoint waited for: `reason` is the cause
     * (`stream-cut`, `unavailable`); `waitMs`, `model` and `message` say how long, for which
     * model entry, and what the endpoint answered (its URL named).
     */
    type: z.literal("retry"),
    child: z.string(),
    attempt: z.number().int(),
    reason: z.string(),
    waitMs: z.number().int().nonnegative().optional(),
    model: z.string().optional(),
    message: z.string().optional(),
  }),
  z.object({
    ...feedBase,
    /**
     * A tool call of a model answer that is not a pick (issue 11 item 1): a Working tool run
     * (`working`), a name on no tools block (`invented`) or a call refused before running
     * (`not-run`, `reason` in words). `summary` is a short form of its arguments (≤ 200 chars).
     */
    type: z.literal("tool-call"),
    child: z.string(),
    agent: z.string(),
    name: z.string(),
    summary: z.string(),
    disposition: z.enum(["working", "invented", "not-run"]),
    reason: z.string().optional(),
  }),
  /** The Harness's warning for a Turn (issue 26): `JR2_SANDBOX=off`, or `network: "host"`. */
  z.object({ ...feedBase, type: z.literal("warning"), child: z.string(), message: z.string() }),
  /** A Turn's model request waits for the KV working set, or its wait in all (issue 30, kv-queue.ts). */
  z.object({ ...feedBase, ...QueuedFeedFields }),
  z.object({
    ...feedBase,
    /** The model wrote a tool call as text; the Turn is nudged with the `text-call` notice. */
    type: z.literal("text-call"),
    child: z.string(),
    agent: z.string(),
    /** `reasoning`: written inside the reasoning (issue 25 §4); absent: in the content. */
    where: z.enum(["reasoning"]).optional(),
  }),
  z.object({
    ...feedBase,
    type: z.literal("fault"),
    child: z.string(),
    reason: z.string(),
    /** The cause in words (e.g. "unknown model `writer`; configured models: …"); optional. */
    detail: z.string().optional(),
    /** A {@link FaultCause} string a workflow may route on, where the model request failed. */
    cause: z.string().optional(),
  }),
  z.object({
    ...feedBase,
    /** A Gate opened, or what it accepts now changed; `since` (ISO-8601): when it opened in this process. */
    type: z.literal("gate"),
    gate: Gate,
    since: z.string().optional(),
  }),
  z.object({
    ...feedBase,
    /**
     * A Gate answered: `event` (its type) was delivered to the open Gate `gate` (its id); `by` is who
     * sent it — the `jr2` CLI, the web console, or any other HTTP client (the `x-jr2-client` header).
     */
    type: z.literal("gate-answered"),
    gate: z.string(),
    event: z.string(),
    by: z.enum(["cli", "http", "console"]),
  }),
  z.object({
    ...feedBase,
    /**
     * An operator resumed the drifted run against the Machine served now (ADR-0271): `accepted`
     * says in words what drift was accepted; `moved` lists the live Turns (`<state path>#<agent>`)
     * admitted again on a new conversation because their Agent's Menu changed. `by` as `gate-answered`'s.
     */
    type: z.literal("resumed"),
    accepted: z.string(),
    moved: z.array(z.string()),
    by: z.enum(["cli", "http", "console"]),
  }),
  z.object({
    ...feedBase,
    /**
     * An operator retried the faulted Turn `child` (`<state path>#<agent>`) in place (ADR-0271):
     * the run was set back to version `fromVersion` (null: its last save before the fault) and the
     * Turn admitted again as `turnId` on a new conversation. `by` as `gate-answered`'s.
     */
    type: z.literal("retried"),
    child: z.string(),
    turnId: z.string(),
    fromVersion: z.number().int().nullable(),
    by: z.enum(["cli", "http", "console"]),
    /**
     * A run faulted by its Machine (ADR-0272): the fault's reason, `from` (`input`: started again
     * from its stored input; else the version restored), the event delivered again, the Turns on
     * a new conversation. Then `child` names where it faulted and `turnId` is empty.
     */
    machineFault: z
      .object({
        reason: z.string(),
        from: z.union([z.literal("input"), z.number().int().positive()]),
        event: z.string().optional(),
        newConversations: z.array(z.string()),
      })
      .optional(),
  }),
  z.object({
    ...feedBase,
    /**
     * A timer fired: `after` is xstate's delayed event, naming the delay and the state that armed
     * it (e.g. `xstate.after.1h.triage.waiting`); `value` is the state it moved that Machine to.
     */
    type: z.literal("timer"),
    after: z.string(),
    value: z.unknown(),
  }),
  z.object({
    ...feedBase,
    /**
     * Another Orchestrator instance took the run over on a shared store (ADR-0280): `instance`
     * (its `JR2_INSTANCE_ID`) adopted it at lease `epoch` after its owner stopped renewing (it
     * died, paused, or stopped and handed it on) and restored it; its Turns re-attached.
     */
    type: z.literal("adopted"),
    instance: z.string(),
    epoch: z.number().int().positive(),
  }),
  z.object({
    ...feedBase,
    /** This run was forked (ADR-0270): `runId` is the new run, started from this run's `version`; `by` who asked. */
    type: z.literal("forked-to"),
    runId: z.string(),
    version: z.number().int().positive(),
    by: z.enum(["cli", "http", "console"]),
  }),
  z.object({
    ...feedBase,
    /** This run is a fork (ADR-0270) of `runId` at its `version`, started from that version's state; `by` who asked. */
    type: z.literal("forked-from"),
    runId: z.string(),
    version: z.number().int().positive(),
    by: z.enum(["cli", "http", "console"]),
    /** The version's root state value and context: where the fork starts. */
    value: z.unknown(),
    context: z.unknown(),
  }),
  z.object({
    ...feedBase,
    /**
     * A Repo Slot (issue 28): `attached` (its Worktree made on `branch` from `commit`, the base),
     * or `pushed` (publish left `commit` on `branch` at `url`, credentials redacted; `hook`: what
     * the operator's publish hook did after the push, ADR-0226, absent when none is configured).
     */
    type: z.literal("repo-slot"),
    event: z.enum(["attached", "pushed"]),
    workspace: z.string(),
    slot: z.string(),
    branch: z.string(),
    commit: z.string(),
    url: z.string().optional(),
    hook: HookResult.optional(),
  }),
]);
export type RunFeedEvent = z.infer<typeof RunFeedEvent>;
/** A feed event before the feed numbers and stamps it (`seq`, `at` are the feed's). */
export type RunFeedEntry = RunFeedEvent extends infer E
  ? E extends RunFeedEvent
    ? Omit<E, "seq" | "at">
    : never
  : never;
