import {
  type Context,
  contentAttributes,
  contextFromTraceparent,
  JR2_ATTR,
  type OrchestratorMetrics,
  ROOT_CONTEXT,
  SPAN_NAMES,
  spanFailed,
  type Tracing,
  traceparentOf,
  withSpan,
} from "@jr2/telemetry";
import type { TurnContext, TurnDriver } from "./turn-driver.js";

/**
 * One trace per Turn (issue 11 item 5, ADR-0420, ADR-0421): a root `jr2.turn` span opened when
 * the Turn driver starts a Turn and ended when its state exits, its context handed to the
 * driver as the Turn's `traceparent` (sent on admissions, saved with the ledger entry). After a
 * restore the Turn's new span continues the trace its ledger entry names. No run span.
 */

/** The Orchestrator's telemetry: the tracing `jr2 serve` started (off by default) and its metrics. */
export interface OrchestratorTelemetry {
  tracing: Tracing;
  metrics: OrchestratorMetrics;
}

/** How a Turn ended, as `jr2.outcome` and the `outcome` label: a fault's reason, or one of these. */
export type TurnSpanOutcome = "ended" | "interrupted" | string;

/**
 * Wraps `driver` so each Turn it starts is one trace and counted (`jr2_turns_started_total`,
 * `jr2_turns_ended_total`). `workflowOf` names a live run's workflow. Never throws more than
 * `driver` does.
 */
export function traceTurns(
  driver: TurnDriver,
  telemetry: OrchestratorTelemetry,
  workflowOf: (runId: string) => string,
): TurnDriver {
  return {
    ...(driver.drainUsage ? { drainUsage: driver.drainUsage.bind(driver) } : {}),
    ...(driver.abortOwed ? { abortOwed: driver.abortOwed.bind(driver) } : {}),
    start(context) {
      const turn = openTurnSpan(telemetry, context, workflowOf(context.runId));
      // The context's getters (`registration` moves on a reseat) stay live through the prototype.
      const traced: TurnContext = Object.create(context, {
        traceparent: { value: turn.traceparent, enumerable: true },
        fault: {
          value: (...args: Parameters<TurnContext["fault"]>) => {
            turn.faulted(args[0]);
            context.fault(...args);
          },
        },
      });
      let stop: () => void;
      try {
        stop = driver.start(traced);
      } catch (error) {
        // The host logs it and never calls a stop: the span ends here, not never.
        turn.end("ended");
        throw error;
      }
      return () => {
        try {
          stop();
        } finally {
          turn.end(context.shuttingDown?.() === true ? "interrupted" : "ended");
        }
      };
    },
  };
}

/** An open `jr2.turn` span. */
export interface TurnSpan {
  /** The span's context as a W3C `traceparent`; `undefined` when tracing is off and nothing is continued. */
  readonly traceparent: string | undefined;
  readonly context: Context;
  /** The Turn faulted with `reason`: the span ends failed, the outcome is the reason. */
  faulted(reason: string): void;
  /** Ends the span (once) and counts the Turn ended; a fault's reason wins over `outcome`. */
  end(outcome: TurnSpanOutcome): void;
}

/**
 * Opens the Turn's root span and counts it started. Its parent is the `traceparent` saved with
 * this Turn's ledger entry (a restore continues the trace), else none (a new trace).
 * Attributes: workflow, state path, agent, turnId, runId; the iid only with content capture.
 */
export function openTurnSpan(
  telemetry: OrchestratorTelemetry,
  context: Pick<TurnContext, "runId" | "registration" | "ledgerRead">,
  workflow: string,
): TurnSpan {
  const { tracing, metrics } = telemetry;
  const { registration } = context;
  const labels = { workflow, agent: registration.agent, state: registration.statePath };
  const span = tracing.tracer.startSpan(
    SPAN_NAMES.TURN,
    {
      attributes: {
        [JR2_ATTR.WORKFLOW]: workflow,
        [JR2_ATTR.STATE]: registration.statePath,
        [JR2_ATTR.AGENT]: registration.agent,
        [JR2_ATTR.RUN_ID]: context.runId,
        ...(registration.turnId === null ? {} : { [JR2_ATTR.TURN_ID]: registration.turnId }),
        ...contentAttributes(tracing, { [JR2_ATTR.IID]: registration.iid }),
      },
    },
    savedTraceOf(context),
  );
  metrics.turnsStarted.inc(labels);
  const spanContext = withSpan(ROOT_CONTEXT, span);
  let fault: string | undefined;
  let ended = false;
  return {
    traceparent: traceparentOf(spanContext),
    context: spanContext,
    faulted(reason) {
      fault ??= reason;
    },
    end(outcome) {
      if (ended) return;
      ended = true;
      const final = fault ?? outcome;
      span.setAttribute(JR2_ATTR.OUTCOME, final);
      if (fault !== undefined) spanFailed(span, fault);
      span.end();
      metrics.turnsEnded.inc({ ...labels, outcome: final });
    },
  };
}

/** The trace a restored Turn continues: its ledger entry's `traceparent`, when it is this Turn's. */
function savedTraceOf(context: Pick<TurnContext, "registration" | "ledgerRead">): Context {
  const { iid, turnId } = context.registration;
  const entry = context.ledgerRead(iid);
  if (!entry?.traceparent || (turnId !== null && entry.turnId !== turnId)) return ROOT_CONTEXT;
  return contextFromTraceparent(entry.traceparent);
}
