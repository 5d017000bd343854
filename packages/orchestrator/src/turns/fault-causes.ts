import { type FaultCause, readFaultCause, type SettlementError } from "@jr2/wire";
import type { AgentFaultReason } from "./agent-fault-event.js";

/**
 * How a Turn ends for the workflow (§5.6): the `agent.fault` class, the cause a workflow may
 * route on (issue 10 §3), and the words for people. Pure: the Agent actor does the effects.
 */

/** One terminal fault of a Turn. */
export interface TurnFault {
  reason: AgentFaultReason;
  cause?: FaultCause;
  detail?: string;
}

/**
 * The one reason each cause maps to (issue 10 "Rules that settle the open questions"):
 * a cause never changes the class a workflow already routes on.
 */
export const REASON_OF_CAUSE: Readonly<Record<FaultCause, AgentFaultReason>> = {
  "context-overflow": "infra",
  "bad-request": "infra",
  "unknown-model": "infra",
  unavailable: "infra",
  "stream-cut": "infra",
  "output-limit": "runaway",
  "text-call": "no-signal",
  "unparsable-output": "no-signal",
  "tool-loop": "runaway",
  "refusal-loop": "runaway",
  "mcp-unavailable": "infra",
  "workspace-lost": "infra",
};

/**
 * The fault of a Submission that settled `failed` (§5.6): the Harness's `error.cause` decides
 * the class where it names a known cause; an error without one (an older Harness) keeps the
 * seed mapping — `type: "runaway"` → `runaway`, anything else → `infra`. The detail is the
 * Harness's message verbatim (it names the endpoint URL and the model entry). A failed
 * Submission is never nudged: whatever its cause, the Turn ends here.
 * @param error the settlement's error; absent on a malformed or older settlement
 */
export function faultOfSettlement(error: SettlementError | undefined): TurnFault {
  const cause = readFaultCause(error?.cause);
  const reason: AgentFaultReason = cause
    ? REASON_OF_CAUSE[cause]
    : error?.type === "runaway"
      ? "runaway"
      : "infra";
  return {
    reason,
    ...(cause ? { cause } : {}),
    detail: bounded(error?.message ?? "the Submission failed", DETAIL_MAX),
  };
}

/** Longest detail kept, characters: it rides the feed, the run's fault and its saved blob. */
export const DETAIL_MAX = 2_000;

/**
 * `text` cut to `max` characters with an ellipsis: a provider's error page quoted whole (an
 * HTML 502 from a proxy) must not flood the feed or the store.
 */
export function bounded(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

/** Where an admission went, for the words of its refusal. */
export interface AdmissionTarget {
  harnessUrl: string;
  agent: string;
  /** The model the admission named (`input.model` or the Agent definition's). */
  model: string;
}

/**
 * The fault of an admission the Harness refused (an HTTP 4xx/5xx answer other than 404, §7.1).
 * `JR2_ERR_MODEL_UNKNOWN` (400) → `infra` / `unknown-model`, with a detail naming the model,
 * the models the Harness has and how to add it; any other 4xx → `infra` / `bad-request` (a
 * request retrying cannot fix); a 5xx → `infra` without a cause (the Harness's own trouble).
 * The Harness's error text is kept; a body that is not a jr2 error is shown bounded.
 * @param status the HTTP status; body the parsed JSON body (or `undefined`)
 */
export function faultOfRefusal(status: number, body: unknown, target: AdmissionTarget): TurnFault {
  const error = readErrorBody(body);
  if (error.code === "JR2_ERR_MODEL_UNKNOWN") {
    const model = typeof error.fields.model === "string" ? error.fields.model : target.model;
    const known = Array.isArray(error.fields.known) ? error.fields.known.join(", ") : undefined;
    return {
      reason: "infra",
      cause: "unknown-model",
      detail: bounded(
        `the Harness at ${target.harnessUrl} has no model \`${model}\` (Agent \`${target.agent}\`)` +
          `${known !== undefined ? `; its models: ${known || "none"}` : ""}. Add \`${model}\` to the ` +
          `Harness's model table (its JR2_MODELS, JSON or @file) and restart it, or give the Agent ` +
          `one of its models. The Harness said: ${error.text}`,
        DETAIL_MAX,
      ),
    };
  }
  // Definition skew (ADR-0231): the Harness names the key it does not know and its version.
  const version =
    error.code === "JR2_ERR_DEFINITION_KEY_UNKNOWN" && typeof error.fields.version === "string"
      ? ` (Harness version ${error.fields.version}; upgrade it to run this Agent)`
      : "";
  const said = bounded(
    `the Harness at ${target.harnessUrl}${version} refused the admission (HTTP ${status}${error.code ? ` ${error.code}` : ""}): ${error.text}`,
    DETAIL_MAX,
  );
  return status >= 400 && status < 500
    ? { reason: "infra", cause: "bad-request", detail: said }
    : { reason: "infra", detail: said };
}

/** Longest raw body quoted in a detail (a proxy's HTML page must not flood the feed). */
const RAW_BODY_MAX = 300;

function readErrorBody(body: unknown): { code?: string; text: string; fields: Record<string, unknown> } {
  if (typeof body === "object" && body !== null && !Array.isArray(body)) {
    const fields = body as Record<string, unknown>;
    const code = typeof fields.code === "string" ? fields.code : undefined;
    if (typeof fields.error === "string")
      return { ...(code ? { code } : {}), text: bounded(fields.error, DETAIL_MAX), fields };
  }
  const raw = body === undefined ? "(no JSON body)" : JSON.stringify(body);
  return { text: bounded(raw, RAW_BODY_MAX), fields: {} };
}
