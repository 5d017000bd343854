import { z } from "zod";
import { JsonSchema, Tool } from "./tool.js";

/**
 * `GET /healthz` on either service. `bootId` (Harness): random per process, so a peer can tell
 * a restarted Harness from a slow one (issue 16 "provably lost"); absent on an older Harness.
 */
export const Health = z.looseObject({
  ok: z.boolean(),
  version: z.string(),
  bootId: z.string().optional(),
  /**
   * The Orchestrator's run store (ADR-0253): `failing` while it refuses writes (saves are
   * retried; picks of a frozen run answer 503). `/healthz` still answers 200 then.
   */
  store: z.enum(["ok", "failing"]).optional(),
});
export type Health = z.infer<typeof Health>;

/** A run's status. `drifted`: its Machine changed shape since it was saved (§8). */
export const RunStatus = z.enum(["running", "done", "faulted", "cancelled", "drifted"]);
export type RunStatus = z.infer<typeof RunStatus>;

/** `GET /workflows` item (§4.1). `input` is the JSON Schema of `jr2Setup({ input })`, or null. */
export const WorkflowSummary = z.object({
  name: z.string(),
  input: JsonSchema.nullable(),
  machines: z.array(z.object({ path: z.string(), agents: z.array(z.string()) })),
});
export type WorkflowSummary = z.infer<typeof WorkflowSummary>;

/**
 * `GET /workflows/:name/menu`: one entry per Machine (the root and each Machine it invokes);
 * per Agent its Menu and each invoking state's derived set (§3.2, §3.3).
 */
export const WorkflowMenu = z.object({
  machines: z.array(
    z.object({
      path: z.string(),
      agents: z.record(
        z.string(),
        z.object({ menu: z.array(Tool), states: z.record(z.string(), z.array(z.string())) }),
      ),
    }),
  ),
});
export type WorkflowMenu = z.infer<typeof WorkflowMenu>;

/**
 * `POST /workflows/:name/runs` body: `{ input }`, the workflow input (validated against its
 * schema). Strict: any other key is refused naming it — `{"task":5}` without the `input`
 * wrapper would otherwise start a run with the default input.
 */
export const StartRunRequest = z.strictObject(
  { input: z.unknown().optional() },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown key ${issue.keys.map((k) => `\`${k}\``).join(", ")}; the body is { "input": <the workflow's input> }`
        : undefined,
  },
);
export type StartRunRequest = z.infer<typeof StartRunRequest>;
export const StartRunAnswer = z.object({ runId: z.string() });
export type StartRunAnswer = z.infer<typeof StartRunAnswer>;

/**
 * How a settled run ended (ADR-0062), computed once when it settles and stored: `succeeded` or
 * `failed` by the `meta.outcome` of the root Machine's top-level final state it reached
 * (default `succeeded`), `faulted` (an unrouted `agent.fault` or a Machine error), `cancelled`.
 * Absent while the run is running; `drifted` is a status, not an outcome.
 */
export const RunOutcome = z.enum(["succeeded", "failed", "faulted", "cancelled"]);
export type RunOutcome = z.infer<typeof RunOutcome>;

/**
 * One `agent.fault` of a run, routed or not (ADR-0062): the Turn it ended (`agent`, `state`
 * path, `turnId`), its `reason`, `cause` (a FaultCause string) and `detail` (words). `routed`:
 * a transition took it; `at` is ISO-8601.
 */
export const RunFaultRecord = z.object({
  agent: z.string(),
  state: z.string(),
  turnId: z.string().nullable(),
  reason: z.string(),
  cause: z.string().optional(),
  detail: z.string().optional(),
  routed: z.boolean(),
  at: z.string(),
});
export type RunFaultRecord = z.infer<typeof RunFaultRecord>;

const tokens = z.number().int().nonnegative();

/**
 * Token totals over a run's recorded model requests (ADR-0400). A total is `null` when any
 * request left that field unreported; `unreportedRequests` counts those requests; the cache
 * hit rate is `reported.cachedTokens / reported.promptTokens`, over the requests that reported
 * both. `requests` counts every recorded model request.
 */
export const UsageTotals = z.object({
  promptTokens: tokens.nullable(),
  cachedTokens: tokens.nullable(),
  completionTokens: tokens.nullable(),
  requests: tokens.optional(),
  unreportedRequests: tokens.optional(),
  reported: z.object({ promptTokens: tokens, cachedTokens: tokens }).optional(),
});
export type UsageTotals = z.infer<typeof UsageTotals>;

/**
 * `GET /runs` item. `updatedAt` is ISO-8601. `outcome` and `finalState` (the root's state value
 * when it settled) once settled (ADR-0062); `gates`: the ids of a running run's open Gates.
 */
export const RunSummary = z.object({
  runId: z.string(),
  workflow: z.string(),
  status: RunStatus,
  updatedAt: z.string(),
  outcome: RunOutcome.optional(),
  finalState: z.unknown().optional(),
  gates: z.array(z.string()).optional(),
  /**
   * Token totals of its recorded model requests (ADR-0255), on a paged answer's items: a list
   * shows prompt, cached and cache % with one call (issue 12), never one call per run.
   */
  usage: UsageTotals.optional(),
  /** The root's state value now (a live run's current one, a settled run's final one), on a paged answer's items. */
  value: z.unknown().optional(),
});
export type RunSummary = z.infer<typeof RunSummary>;

/**
 * `GET /runs` query (ADR-0062). Without `limit` and `cursor` the answer is every matching run
 * as an array (the answer before paging); with either it is a {@link RunPage}. `limit` 1–500;
 * `cursor` is a page's `nextCursor`, opaque.
 */
export const RunListQuery = z.object({
  status: RunStatus.optional(),
  outcome: RunOutcome.optional(),
  workflow: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
  cursor: z.string().min(1).max(1000).optional(),
});
export type RunListQuery = z.infer<typeof RunListQuery>;

/** A page of `GET /runs?limit=`, newest first; `nextCursor` null on the last page. */
export const RunPage = z.object({ runs: z.array(RunSummary), nextCursor: z.string().nullable() });
export type RunPage = z.infer<typeof RunPage>;

/** An open Gate (§6): `accepts` drives a form; `acceptsNow` is the payload-blind reading now. */
export const Gate = z.object({
  id: z.string(),
  path: z.string(),
  accepts: z.array(Tool),
  acceptsNow: z.array(z.string()),
  meta: z.unknown().optional(),
});
export type Gate = z.infer<typeof Gate>;

/** `GET /runs/:runId` (§4.1). */
export const RunDetail = z.object({
  runId: z.string(),
  workflow: z.string(),
  status: RunStatus,
  value: z.unknown(),
  context: z.unknown(),
  gates: z.array(Gate),
  turns: z.array(
    z.object({ iid: z.string(), agent: z.string(), state: z.string(), turnId: z.string().nullable() }),
  ),
  usage: UsageTotals,
  /**
   * Why the run faulted; `detail` is the cause in words when a Turn fault faulted it; `cause`
   * a {@link FaultCause} string where the model request failed.
   */
  fault: z
    .object({ reason: z.string(), detail: z.string().optional(), cause: z.string().optional() })
    .optional(),
  updatedAt: z.string(),
  /** How it ended, once settled (ADR-0062); absent while running and for a drifted run. */
  outcome: RunOutcome.optional(),
  /** The root's state value when it settled (the same as `value` then). */
  finalState: z.unknown().optional(),
  /** Every `agent.fault` of the run, routed or not, in order. */
  faults: z.array(RunFaultRecord).optional(),
  /** The validated run input. */
  input: z.unknown().optional(),
});
export type RunDetail = z.infer<typeof RunDetail>;

/** `POST /runs/:runId/gates/:gateId/events` body: `{ type, ...payload }` (§6). */
export const GateEventRequest = z.looseObject({ type: z.string().min(1) });
export type GateEventRequest = z.infer<typeof GateEventRequest>;
export const GateEventAnswer = z.object({ moved: z.literal(true) });
export type GateEventAnswer = z.infer<typeof GateEventAnswer>;

/**
 * `POST /runs/:runId/cancel` body (optional, issue 22): `expect` is the status the caller saw;
 * when the run's status is another by then (a racing resume won), nothing changes and the answer
 * is 409 `JR2_ERR_RUN_STATUS_CHANGED` naming what changed it. Absent: any live or drifted run.
 */
export const CancelRequest = z.strictObject({ expect: RunStatus.optional() });
export type CancelRequest = z.infer<typeof CancelRequest>;

/** `POST /runs/:runId/cancel` answer. */
export const CancelAnswer = z.object({ runId: z.string(), status: RunStatus });
export type CancelAnswer = z.infer<typeof CancelAnswer>;

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
]);
export type RunFeedEvent = z.infer<typeof RunFeedEvent>;
/** A feed event before the feed numbers and stamps it (`seq`, `at` are the feed's). */
export type RunFeedEntry = RunFeedEvent extends infer E
  ? E extends RunFeedEvent
    ? Omit<E, "seq" | "at">
    : never
  : never;
