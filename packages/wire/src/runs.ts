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
