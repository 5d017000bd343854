import {
  createMetrics,
  type Jr2Metrics,
  registerKvQueueMetrics,
  TRACING_OFF,
  type Tracing,
} from "@jr2/telemetry";
import type { EndpointLimiter } from "../provider/limiter.js";
import type { ModelTable } from "../provider/models.js";
import type { KvScheduling } from "../provider/scheduling/kv-scheduling.js";
import type { HarnessTelemetry } from "./submission-telemetry.js";

/**
 * The Harness's telemetry, put together once per process (ADR-0420): the tracing main started
 * (off by default) and a registry of the Harness's metric families, its endpoint gauges read
 * from the limiter at each scrape.
 */
export function createHarnessTelemetry(opts: {
  tracing: Tracing | undefined;
  models: ModelTable;
  limiter: EndpointLimiter;
  kv?: KvScheduling;
}): { telemetry: HarnessTelemetry; metrics: Jr2Metrics } {
  const metrics = createMetrics({ service: "harness" });
  metrics.harness.readEndpoints(() => endpointRows(opts.limiter.depth(), opts.models));
  const kv = opts.kv;
  if (kv) {
    const names = endpointNames(opts.models);
    registerKvQueueMetrics(
      metrics.registry,
      () =>
        Object.entries(kv.snapshot()).map(([endpoint, s]) => ({ model: names.get(endpoint) ?? "?", ...s })),
      () => kv.drainWaits().map((w) => ({ model: names.get(w.endpoint) ?? "?", seconds: w.ms / 1000 })),
    );
  }
  return { telemetry: { tracing: opts.tracing ?? TRACING_OFF, metrics: metrics.harness }, metrics };
}

/**
 * One row per endpoint of the model table, named by the first (sorted) model entry that uses
 * it — a URL is never a label, and entries sharing an endpoint share its lane, so one row each
 * keeps a sum over rows right. An endpoint not yet used reads 0.
 */
export function endpointRows(
  depth: Record<string, { running: number; queued: number }>,
  models: ModelTable,
): Array<{ model: string; queued: number; running: number }> {
  return [...endpointNames(models)].map(([baseUrl, model]) => ({
    model,
    queued: depth[baseUrl]?.queued ?? 0,
    running: depth[baseUrl]?.running ?? 0,
  }));
}

/** Endpoint → the first (sorted) model entry that uses it: the label of its rows. */
function endpointNames(models: ModelTable): Map<string, string> {
  const byEndpoint = new Map<string, string>();
  for (const name of Object.keys(models).sort()) {
    const baseUrl = models[name]!.baseUrl;
    if (!byEndpoint.has(baseUrl)) byEndpoint.set(baseUrl, name);
  }
  return byEndpoint;
}
