import { PickRefusal } from "@jr2/wire";
import { Counter, Gauge, Registry } from "prom-client";

/**
 * The Prometheus metrics of both services (issue 11 item 5, ADR-0420), as prom-client families
 * in one Registry. Labels are only the bounded names an operator configured or jr2 enumerates
 * ({@link METRIC_LABELS}) — never a runId, iid, turnId, URL or text; a value read from a model
 * server (a finish reason) is mapped onto a fixed set first. Token counts are counters: the
 * cache hit ratio is a query (`rate(cached) / rate(prompt)`), not a gauge.
 */

/** Every label a jr2 metric may carry; `createMetrics` refuses a family with any other. */
export const METRIC_LABELS = [
  "workflow",
  "agent",
  /** The state path, dot-joined. */
  "state",
  /** The model entry's name in `JR2_MODELS`. */
  "model",
  "status",
  "outcome",
  /** A pick's refusal class (`none` when delivered). */
  "refusal",
  "finish_reason",
] as const;
export type MetricLabel = (typeof METRIC_LABELS)[number];

/** Which service's families a registry exposes. */
export type MetricsService = "orchestrator" | "harness";

/** What the Orchestrator counts (its wiring increments these). */
export interface OrchestratorMetrics {
  /** `jr2_runs_started_total{workflow}` */
  runsStarted: Counter<"workflow">;
  /** `jr2_runs_settled_total{workflow,status,outcome}`: once per run, when it settles. */
  runsSettled: Counter<"workflow" | "status" | "outcome">;
  /** `jr2_turns_started_total{workflow,agent,state}` */
  turnsStarted: Counter<"workflow" | "agent" | "state">;
  /** `jr2_turns_ended_total{workflow,agent,state,outcome}` */
  turnsEnded: Counter<"workflow" | "agent" | "state" | "outcome">;
  /** `jr2_picks_total{workflow,agent,state,refusal}`: refusal `none` for a delivered pick ({@link refusalLabel}). */
  picks: Counter<"workflow" | "agent" | "state" | "refusal">;
  /** `jr2_turn_model_requests_total{workflow,agent,model,finish_reason}`: from recorded usage events. */
  modelRequests: Counter<"workflow" | "agent" | "model" | "finish_reason">;
  /** `jr2_turn_prompt_tokens_total{workflow,agent,model}`: reported prompt tokens only. */
  promptTokens: Counter<"workflow" | "agent" | "model">;
  /** `jr2_turn_cached_tokens_total{workflow,agent,model}`: reported cached tokens only. */
  cachedTokens: Counter<"workflow" | "agent" | "model">;
  /** `jr2_turn_output_tokens_total{workflow,agent,model}`: reported completion tokens only. */
  outputTokens: Counter<"workflow" | "agent" | "model">;
  /** `jr2_runs{workflow,status}` (a gauge): `reader` is called at each scrape; the last set wins. */
  readRuns(reader: () => Iterable<{ workflow: string; status: string; count: number }>): void;
}

/** What the Harness counts. */
export interface HarnessMetrics {
  /** `jr2_model_requests_total{model,finish_reason}`: every model request, failed ones as `error`. */
  modelRequests: Counter<"model" | "finish_reason">;
  /** `jr2_model_prompt_tokens_total{model}`: prompt tokens the servers reported. */
  promptTokens: Counter<"model">;
  /** `jr2_model_cached_tokens_total{model}`: cached prompt tokens the servers reported. */
  cachedTokens: Counter<"model">;
  /** `jr2_model_output_tokens_total{model}`: completion tokens the servers reported. */
  outputTokens: Counter<"model">;
  /** `jr2_model_usage_unreported_total{model}`: answers missing a usage field (ADR-0400). */
  usageUnreported: Counter<"model">;
  /** `jr2_submissions_settled_total{model,outcome}` */
  submissionsSettled: Counter<"model" | "outcome">;
  /**
   * `jr2_endpoint_queue_depth{model}` and `jr2_endpoint_running{model}` (gauges): `reader` is
   * called at each scrape; one row per endpoint, named by a model entry (never its URL).
   */
  readEndpoints(reader: () => Iterable<{ model: string; queued: number; running: number }>): void;
}

/** The registry and every family. */
export interface Jr2Metrics {
  /** The prom-client Registry `/metrics` serves. */
  registry: Registry;
  orchestrator: OrchestratorMetrics;
  harness: HarnessMetrics;
  /** The registry as Prometheus text (what `/metrics` answers). */
  text(): Promise<string>;
}

/** What {@link createMetrics} is built from. */
export interface MetricsOptions {
  /** Expose only this service's families (the other's still count, unscraped); default both. */
  service?: MetricsService;
}

/**
 * Builds a fresh Registry with jr2's metric definitions (no global registry, no default
 * process metrics: nothing runs between scrapes).
 * @throws Error when a family declares a label outside {@link METRIC_LABELS} (a programming error)
 * @example const metrics = createMetrics({ service: "harness" });
 * metrics.harness.modelRequests.inc({ model: "coder", finish_reason: finishReasonLabel("stop") });
 */
export function createMetrics(opts: MetricsOptions = {}): Jr2Metrics {
  const registry = new Registry();
  const unscraped = new Registry();
  const into = (service: MetricsService) =>
    opts.service === undefined || opts.service === service ? [registry] : [unscraped];
  const counter = <L extends MetricLabel>(service: MetricsService, name: string, help: string, labels: L[]) =>
    new Counter<L>({ name, help, labelNames: allowed(name, labels), registers: into(service) });

  let runsReader: Parameters<OrchestratorMetrics["readRuns"]>[0] = () => [];
  new Gauge<"workflow" | "status">({
    name: "jr2_runs",
    help: "Runs the Orchestrator holds now, by workflow and status.",
    labelNames: allowed("jr2_runs", ["workflow", "status"]),
    registers: into("orchestrator"),
    collect() {
      this.reset();
      for (const r of runsReader()) this.set({ workflow: r.workflow, status: r.status }, r.count);
    },
  });
  let endpointReader: Parameters<HarnessMetrics["readEndpoints"]>[0] = () => [];
  const endpointGauge = (name: string, help: string, field: "queued" | "running") =>
    new Gauge<"model">({
      name,
      help,
      labelNames: allowed(name, ["model"]),
      registers: into("harness"),
      collect() {
        this.reset();
        for (const e of endpointReader()) this.set({ model: e.model }, e[field]);
      },
    });
  endpointGauge("jr2_endpoint_queue_depth", "Model requests waiting for an endpoint slot.", "queued");
  endpointGauge("jr2_endpoint_running", "Model requests holding an endpoint slot.", "running");

  const o = "orchestrator" as const;
  const h = "harness" as const;
  return {
    registry,
    orchestrator: {
      runsStarted: counter(o, "jr2_runs_started_total", "Runs started.", ["workflow"]),
      runsSettled: counter(o, "jr2_runs_settled_total", "Runs settled, by final status and outcome.", [
        "workflow",
        "status",
        "outcome",
      ]),
      turnsStarted: counter(o, "jr2_turns_started_total", "Turns started.", ["workflow", "agent", "state"]),
      turnsEnded: counter(o, "jr2_turns_ended_total", "Turns ended, by outcome.", [
        "workflow",
        "agent",
        "state",
        "outcome",
      ]),
      picks: counter(o, "jr2_picks_total", "Picks answered, by refusal class (none: delivered).", [
        "workflow",
        "agent",
        "state",
        "refusal",
      ]),
      modelRequests: counter(
        o,
        "jr2_turn_model_requests_total",
        "Model requests of Turns, by finish reason.",
        ["workflow", "agent", "model", "finish_reason"],
      ),
      promptTokens: counter(o, "jr2_turn_prompt_tokens_total", "Prompt tokens of Turns (reported).", [
        "workflow",
        "agent",
        "model",
      ]),
      cachedTokens: counter(o, "jr2_turn_cached_tokens_total", "Cached prompt tokens of Turns (reported).", [
        "workflow",
        "agent",
        "model",
      ]),
      outputTokens: counter(o, "jr2_turn_output_tokens_total", "Output tokens of Turns (reported).", [
        "workflow",
        "agent",
        "model",
      ]),
      readRuns: (reader) => {
        runsReader = reader;
      },
    },
    harness: {
      modelRequests: counter(h, "jr2_model_requests_total", "Model requests, by finish reason.", [
        "model",
        "finish_reason",
      ]),
      promptTokens: counter(h, "jr2_model_prompt_tokens_total", "Prompt tokens the servers reported.", [
        "model",
      ]),
      cachedTokens: counter(
        h,
        "jr2_model_cached_tokens_total",
        "Cached prompt tokens the servers reported.",
        ["model"],
      ),
      outputTokens: counter(h, "jr2_model_output_tokens_total", "Output tokens the servers reported.", [
        "model",
      ]),
      usageUnreported: counter(
        h,
        "jr2_model_usage_unreported_total",
        "Model answers whose usage lacked a field (not counted as 0).",
        ["model"],
      ),
      submissionsSettled: counter(h, "jr2_submissions_settled_total", "Submissions settled, by outcome.", [
        "model",
        "outcome",
      ]),
      readEndpoints: (reader) => {
        endpointReader = reader;
      },
    },
    text: () => registry.metrics(),
  };
}

function allowed<L extends string>(name: string, labels: L[]): L[] {
  const bad = labels.filter((l) => !(METRIC_LABELS as readonly string[]).includes(l));
  if (bad.length > 0)
    throw new Error(
      `metric ${name}: label(s) ${bad.join(", ")} not allowed; allowed: ${METRIC_LABELS.join(", ")}`,
    );
  return labels;
}

/** Finish reasons kept as they are; jr2's own: `error` (failed), `aborted`, `unreported`. */
export const FINISH_REASON_LABELS = [
  "stop",
  "length",
  "tool_calls",
  "content_filter",
  "function_call",
  "error",
  "aborted",
  "unreported",
  "other",
] as const;

/**
 * The `finish_reason` label of a model request: a server's reason when it is one of
 * {@link FINISH_REASON_LABELS}, `other` for any other text (a server's string never becomes a
 * label), `unreported` when it gave none.
 */
export function finishReasonLabel(reason: string | undefined): (typeof FINISH_REASON_LABELS)[number] {
  if (reason === undefined || reason === "") return "unreported";
  return (FINISH_REASON_LABELS as readonly string[]).includes(reason)
    ? (reason as (typeof FINISH_REASON_LABELS)[number])
    : "other";
}

/** The `refusal` label of a pick: `none` when delivered, its refusal class, or `other`. */
export function refusalLabel(refusal: string | undefined): PickRefusal | "none" | "other" {
  if (refusal === undefined) return "none";
  const known = PickRefusal.safeParse(refusal);
  return known.success ? known.data : "other";
}
