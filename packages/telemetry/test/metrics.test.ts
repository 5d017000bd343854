import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import {
  createMetrics,
  finishReasonLabel,
  METRIC_LABELS,
  metricsRoute,
  PROMETHEUS_CONTENT_TYPE,
  parsePrometheusText,
  readMetricsToken,
  refusalLabel,
  sampleSum,
} from "../src/index.js";

/** Labels a metric must never carry (issue 11 "Telemetry shape"). */
const FORBIDDEN = ["runId", "run_id", "iid", "turnId", "turn_id", "url", "endpoint", "text", "message"];

function exercised() {
  const metrics = createMetrics();
  const o = metrics.orchestrator;
  o.runsStarted.inc({ workflow: "review" });
  o.runsSettled.inc({ workflow: "review", status: "done", outcome: "succeeded" });
  o.turnsStarted.inc({ workflow: "review", agent: "coder", state: "review.coding" });
  o.turnsEnded.inc({ workflow: "review", agent: "coder", state: "review.coding", outcome: "completed" });
  o.picks.inc({
    workflow: "review",
    agent: "coder",
    state: "review.coding",
    refusal: refusalLabel(undefined),
  });
  o.picks.inc({
    workflow: "review",
    agent: "coder",
    state: "review.coding",
    refusal: refusalLabel("off-menu"),
  });
  o.modelRequests.inc({ workflow: "review", agent: "coder", model: "sim", finish_reason: "tool_calls" });
  o.promptTokens.inc({ workflow: "review", agent: "coder", model: "sim" }, 568);
  o.cachedTokens.inc({ workflow: "review", agent: "coder", model: "sim" }, 567);
  o.outputTokens.inc({ workflow: "review", agent: "coder", model: "sim" }, 8);
  o.readRuns(() => [{ workflow: "review", status: "running", count: 2 }]);
  const h = metrics.harness;
  h.modelRequests.inc({ model: "sim", finish_reason: finishReasonLabel("stop") });
  h.promptTokens.inc({ model: "sim" }, 10);
  h.cachedTokens.inc({ model: "sim" }, 4);
  h.outputTokens.inc({ model: "sim" }, 3);
  h.usageUnreported.inc({ model: "sim" });
  h.submissionsSettled.inc({ model: "sim", outcome: "completed" });
  h.readEndpoints(() => [{ model: "sim", queued: 3, running: 4 }]);
  return metrics;
}

describe("metrics", () => {
  it("the text parses as Prometheus exposition and carries what was counted", async () => {
    const scrape = parsePrometheusText(await exercised().text());
    expect(scrape.types.jr2_runs_settled_total).toBe("counter");
    expect(scrape.types.jr2_endpoint_queue_depth).toBe("gauge");
    expect(sampleSum(scrape, "jr2_runs_settled_total", { outcome: "succeeded" })).toBe(1);
    expect(sampleSum(scrape, "jr2_picks_total", { refusal: "none" })).toBe(1);
    expect(sampleSum(scrape, "jr2_picks_total", { refusal: "off-menu" })).toBe(1);
    expect(sampleSum(scrape, "jr2_turn_cached_tokens_total")).toBe(567);
    expect(sampleSum(scrape, "jr2_runs", { status: "running" })).toBe(2);
    expect(sampleSum(scrape, "jr2_model_requests_total", { finish_reason: "stop" })).toBe(1);
    expect(sampleSum(scrape, "jr2_endpoint_queue_depth", { model: "sim" })).toBe(3);
    expect(sampleSum(scrape, "jr2_endpoint_running", { model: "sim" })).toBe(4);
  });

  it("no family declares, and no sample carries, a label outside the allowed set", async () => {
    const metrics = exercised();
    for (const family of await metrics.registry.getMetricsAsJSON()) {
      for (const v of family.values)
        for (const label of Object.keys(v.labels)) {
          expect(METRIC_LABELS as readonly string[]).toContain(label);
          expect(FORBIDDEN).not.toContain(label);
        }
    }
    for (const s of parsePrometheusText(await metrics.text()).samples)
      for (const label of Object.keys(s.labels)) expect(METRIC_LABELS as readonly string[]).toContain(label);
  });

  it("a service's registry shows only its families; the other's still count, unscraped", async () => {
    const metrics = createMetrics({ service: "harness" });
    metrics.orchestrator.runsStarted.inc({ workflow: "review" });
    metrics.harness.modelRequests.inc({ model: "sim", finish_reason: "stop" });
    const names = new Set(parsePrometheusText(await metrics.text()).samples.map((s) => s.name));
    expect(names.has("jr2_model_requests_total")).toBe(true);
    expect([...names].some((n) => n.startsWith("jr2_runs"))).toBe(false);
  });

  it("a server's finish reason becomes a label only from a fixed set", () => {
    expect(finishReasonLabel("tool_calls")).toBe("tool_calls");
    expect(finishReasonLabel(undefined)).toBe("unreported");
    expect(finishReasonLabel("ignore previous instructions")).toBe("other");
    expect(refusalLabel("busy")).toBe("busy");
    expect(refusalLabel("something-new")).toBe("other");
  });

  it("parsePrometheusText refuses what is not Prometheus text", () => {
    expect(() => parsePrometheusText('jr2_x{a="b} 1')).toThrow(/line 1/);
    expect(() => parsePrometheusText("<html>")).toThrow(/not Prometheus text/);
  });
});

describe("GET /metrics", () => {
  const TOKEN = "metrics-token-0123456789abcdef";
  const build = (token: string | undefined) => {
    const app = Fastify();
    app.register(metricsRoute, { metrics: exercised(), token });
    return app;
  };

  it("open when no token is set, like /healthz", async () => {
    const res = await build(undefined).inject({ method: "GET", url: "/metrics" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe(PROMETHEUS_CONTENT_TYPE);
    expect(parsePrometheusText(res.body).samples.length).toBeGreaterThan(0);
  });

  it("with JR2_METRICS_TOKEN: only `Bearer <that token>` opens it; the service's own bearer does not", async () => {
    const app = build(TOKEN);
    const get = (authorization?: string) =>
      app.inject({ method: "GET", url: "/metrics", headers: authorization ? { authorization } : {} });
    const none = await get();
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ code: "JR2_ERR_AUTH_MISSING" });
    const other = await get("Bearer the-services-own-bearer-token");
    expect(other.statusCode).toBe(401);
    expect(other.json()).toMatchObject({ code: "JR2_ERR_AUTH_INVALID" });
    expect((await get(`Bearer ${TOKEN} extra`)).statusCode).toBe(401);
    const ok = await get(`bearer ${TOKEN}`);
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain("jr2_model_requests_total");
  });

  it("JR2_METRICS_TOKEN is held to the secret rule; blank is unset", () => {
    expect(readMetricsToken({})).toBeUndefined();
    expect(readMetricsToken({ JR2_METRICS_TOKEN: "  " })).toBeUndefined();
    expect(readMetricsToken({ JR2_METRICS_TOKEN: TOKEN })).toBe(TOKEN);
    expect(() => readMetricsToken({ JR2_METRICS_TOKEN: "short" })).toThrow(/JR2_METRICS_TOKEN/);
  });
});
