import {
  type Attributes,
  type Context,
  contentAttributes,
  contextFromTraceparent,
  finishReasonLabel,
  JR2_ATTR,
  ROOT_CONTEXT,
  refusalLabel,
  SPAN_NAMES,
  traceparentOf,
} from "@jr2/telemetry";
import type { PickAnswer, PickRequest } from "@jr2/wire";
import type { SavedRun } from "../durability/saved-run.js";
import type { UsageRecord } from "../durability/usage-totals.js";
import type { Registration } from "../turns/registration-table.js";
import type { OrchestratorTelemetry } from "../turns/turn-spans.js";

/**
 * The run host's telemetry (issue 11 item 5, ADR-0421): the `jr2.pick` span and count of each
 * answered pick, runs started and settled, the runs gauge, and model requests with their tokens
 * from the usage the host records (once per key, ADR-0255 — so the counters equal the runs'
 * usage totals). Labels only workflow, agent, state, model, status, outcome, refusal and
 * finish reason (ADR-0420). Each function is one step the host calls; none throws.
 */

export type { OrchestratorTelemetry };

/** The pick's span attributes: name, refusal, moved; its arguments only with content capture. */
export function pickSpanAttributes(
  capture: { captureContent: boolean },
  registration: Pick<Registration, "runId" | "turnId" | "agent" | "statePath" | "iid">,
  workflow: string,
  pick: Pick<PickRequest, "name" | "arguments">,
  answer: Pick<PickAnswer, "delivered" | "moved" | "refusal">,
): Attributes {
  return {
    [JR2_ATTR.PICK_NAME]: pick.name,
    [JR2_ATTR.PICK_MOVED]: answer.moved === true,
    ...(answer.refusal ? { [JR2_ATTR.PICK_REFUSAL]: answer.refusal } : {}),
    [JR2_ATTR.WORKFLOW]: workflow,
    [JR2_ATTR.STATE]: registration.statePath,
    [JR2_ATTR.AGENT]: registration.agent,
    [JR2_ATTR.RUN_ID]: registration.runId,
    ...(registration.turnId === null ? {} : { [JR2_ATTR.TURN_ID]: registration.turnId }),
    ...contentAttributes(capture, {
      [JR2_ATTR.IID]: registration.iid,
      "jr2.pick.arguments": JSON.stringify(pick.arguments ?? {}),
    }),
  };
}

/**
 * The parent of a pick's span: the pick request's `traceparent` (the Harness's Submission span)
 * when it carries one, else the Turn's own (`turnTraceparent`, its ledger entry's), else none.
 */
export function pickParent(requestTrace: Context | undefined, turnTraceparent: string | undefined): Context {
  if (requestTrace && traceparentOf(requestTrace) !== undefined) return requestTrace;
  return turnTraceparent ? contextFromTraceparent(turnTraceparent) : ROOT_CONTEXT;
}

/**
 * Records one answered pick: a `jr2.pick` span from `startedAt` to now under `parent`, and
 * `jr2_picks_total{workflow,agent,state,refusal}` (`none` when delivered).
 */
export function tracePick(
  telemetry: OrchestratorTelemetry | undefined,
  registration: Registration,
  workflow: string,
  pick: PickRequest,
  answer: PickAnswer,
  parent: Context,
  startedAt: number,
): void {
  if (!telemetry) return;
  const { tracing, metrics } = telemetry;
  const attributes = pickSpanAttributes(tracing, registration, workflow, pick, answer);
  tracing.tracer.startSpan(SPAN_NAMES.PICK, { attributes, startTime: startedAt }, parent).end();
  metrics.picks.inc({
    workflow,
    agent: registration.agent,
    state: registration.statePath,
    refusal: refusalLabel(answer.refusal),
  });
}

/** Counts a run started (`jr2_runs_started_total{workflow}`). */
export function countRunStarted(telemetry: OrchestratorTelemetry | undefined, workflow: string): void {
  telemetry?.metrics.runsStarted.inc({ workflow });
}

/** A run as the settled count reads it; `outcome` once runs have one (issue 11 item 2). */
export interface SettlingRun {
  readonly workflow: string;
  readonly status: string;
  readonly outcome?: string | undefined;
}

/** Runs already counted settled (a run settles once; later changes of it add nothing). */
const settledCounted = new WeakSet<object>();

/**
 * Counts `run` settled (`jr2_runs_settled_total{workflow,status,outcome}`) the first time it
 * is seen with a status other than `running`; call on every change of the run.
 */
export function countRunSettled(telemetry: OrchestratorTelemetry | undefined, run: SettlingRun): void {
  if (!telemetry || run.status === "running" || settledCounted.has(run)) return;
  settledCounted.add(run);
  telemetry.metrics.runsSettled.inc({
    workflow: run.workflow,
    status: run.status,
    ...(run.outcome ? { outcome: run.outcome } : {}),
  });
}

/**
 * Counts one newly recorded model request: `jr2_turn_model_requests_total` by finish reason and
 * the reported prompt, cached and output tokens (an unreported count adds nothing). `turn` is
 * the live registration of the record's iid, when there still is one (a drained Turn's is gone:
 * `unknown`).
 */
export function countUsage(
  telemetry: OrchestratorTelemetry | undefined,
  workflow: string,
  turn: Pick<Registration, "agent" | "input" | "definition"> | undefined,
  record: UsageRecord,
): void {
  if (!telemetry) return;
  const { metrics } = telemetry;
  const labels = {
    workflow,
    agent: turn?.agent ?? "unknown",
    model: turn ? (turn.input.model ?? turn.definition.model) : "unknown",
  };
  metrics.modelRequests.inc({ ...labels, finish_reason: finishReasonLabel(record.finishReason) });
  if (record.promptTokens !== null) metrics.promptTokens.inc(labels, record.promptTokens);
  if (record.cachedTokens !== null) metrics.cachedTokens.inc(labels, record.cachedTokens);
  if (record.completionTokens !== null) metrics.outputTokens.inc(labels, record.completionTokens);
}

/** `jr2_runs{workflow,status}` at each scrape: the runs held in memory, grouped. */
export function readRunsGauge(
  telemetry: OrchestratorTelemetry | undefined,
  runs: () => Iterable<{ workflow: string; status: string }>,
): void {
  telemetry?.metrics.readRuns(() => {
    const counts = new Map<string, { workflow: string; status: string; count: number }>();
    for (const { workflow, status } of runs()) {
      const key = JSON.stringify([workflow, status]);
      const row = counts.get(key) ?? { workflow, status, count: 0 };
      row.count++;
      counts.set(key, row);
    }
    return counts.values();
  });
}

/**
 * `persistence` whose `recordUsage` also counts each record it found new ({@link countUsage}):
 * every path that records usage (a live Turn's follower, a restore's drain) goes through it.
 * `turnOf` reads the live registration of an iid. Without telemetry, `persistence` itself.
 */
export function countingUsage<P extends { recordUsage(run: SavedRun, record: UsageRecord): boolean }>(
  persistence: P,
  telemetry: OrchestratorTelemetry | undefined,
  turnOf: (iid: string) => Registration | undefined,
): P {
  if (!telemetry) return persistence;
  return {
    ...persistence,
    recordUsage(run: SavedRun, record: UsageRecord) {
      const fresh = persistence.recordUsage(run, record);
      if (fresh) countUsage(telemetry, run.workflow, turnOf(record.iid), record);
      return fresh;
    },
  };
}
