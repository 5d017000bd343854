/**
 * The Orchestrator's spans and counters (issue 11 item 5, ADR-0421), against a collecting
 * exporter: the `jr2.pick` span's attributes and parent, the `jr2.turn` root of a Turn (its
 * `traceparent` handed to the driver, continued from the ledger after a restore, failed on a
 * fault), the admission's `traceparent` header, and the no-content rule (no iid, no arguments
 * unless `JR2_OTEL_CAPTURE_CONTENT=true`).
 */
import {
  contextFromTraceparent,
  createMetrics,
  parsePrometheusText,
  ROOT_CONTEXT,
  sampleSum,
  startTracing,
  TRACEPARENT_HEADER,
  type Tracing,
} from "@jr2/telemetry";
import type { PickAnswer } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import type { LedgerEntry } from "../src/durability/store/run-store.js";
import { buildOrchestrator } from "../src/http/server.js";
import { pickParent, pickSpanAttributes, tracePick } from "../src/runs/run-telemetry.js";
import { readServeConfig } from "../src/serve/config.js";
import { createHarnessClient } from "../src/turns/harness-client.js";
import type { Registration } from "../src/turns/registration-table.js";
import type { TurnContext, TurnDriver } from "../src/turns/turn-driver.js";
import { type OrchestratorTelemetry, traceTurns } from "../src/turns/turn-spans.js";

type Exporter = NonNullable<Parameters<typeof startTracing>[0]["exporter"]>;
type Exported = Parameters<Exporter["export"]>[0][number];

/** Tracing into an array (flush to read), and fresh metrics. */
function collecting(env: Record<string, string> = {}) {
  const spans: Exported[] = [];
  const exporter: Exporter = {
    export(batch, done) {
      spans.push(...batch);
      done({ code: 0 });
    },
    shutdown: async () => {},
  };
  const tracing: Tracing = startTracing({ serviceName: "jr2-orchestrator", env, exporter });
  const registry = createMetrics({ service: "orchestrator" });
  const telemetry: OrchestratorTelemetry = { tracing, metrics: registry.orchestrator };
  return { spans, tracing, telemetry, registry };
}

const registration = {
  iid: "run-1/review/coder",
  runId: "run-1",
  agent: "coder",
  turnId: "t-1",
  statePath: "coding",
  input: { model: "coder" },
  definition: { model: "coder" },
} as unknown as Registration;

const pick = { name: "submit", arguments: { summary: "secret plans" }, toolCallId: "c1" };
const delivered: PickAnswer = { delivered: true, moved: true, turnComplete: true, allowed: [] };
const refused: PickAnswer = {
  delivered: false,
  refusal: "off-menu",
  turnComplete: false,
  allowed: ["submit"],
};
const PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("the jr2.pick span", () => {
  it("carries name, refusal and moved — and no iid or arguments without content capture", () => {
    const attributes = pickSpanAttributes({ captureContent: false }, registration, "review", pick, refused);
    expect(attributes).toMatchObject({
      "jr2.pick.name": "submit",
      "jr2.pick.refusal": "off-menu",
      "jr2.pick.moved": false,
      "jr2.workflow": "review",
      "jr2.state": "coding",
      "jr2.agent": "coder",
      "jr2.run_id": "run-1",
      "jr2.turn_id": "t-1",
    });
    expect(Object.keys(attributes)).not.toContain("jr2.iid");
    expect(Object.keys(attributes)).not.toContain("jr2.pick.arguments");
    expect(JSON.stringify(attributes)).not.toContain("secret plans");
    const ok = pickSpanAttributes({ captureContent: false }, registration, "review", pick, delivered);
    expect(ok["jr2.pick.moved"]).toBe(true);
    expect(Object.keys(ok)).not.toContain("jr2.pick.refusal");
  });

  it("carries the iid and the arguments with JR2_OTEL_CAPTURE_CONTENT=true", () => {
    const attributes = pickSpanAttributes({ captureContent: true }, registration, "review", pick, delivered);
    expect(attributes["jr2.iid"]).toBe("run-1/review/coder");
    expect(attributes["jr2.pick.arguments"]).toBe('{"summary":"secret plans"}');
  });

  it("is a child of the pick request's traceparent, else of the Turn's, and is counted by refusal", async () => {
    const { spans, tracing, telemetry, registry } = collecting();
    const fromRequest = pickParent(contextFromTraceparent(PARENT), undefined);
    tracePick(telemetry, registration, "review", pick, refused, fromRequest, Date.now());
    const turnParent = "00-1af7651916cd43dd8448eb211c80319c-c7ad6b7169203331-01";
    tracePick(
      telemetry,
      registration,
      "review",
      pick,
      delivered,
      pickParent(ROOT_CONTEXT, turnParent),
      Date.now(),
    );
    await tracing.flush();
    expect(spans.map((s) => s.name)).toEqual(["jr2.pick", "jr2.pick"]);
    expect(spans[0]!.spanContext().traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(spans[0]!.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
    expect(spans[1]!.spanContext().traceId).toBe("1af7651916cd43dd8448eb211c80319c");
    const scrape = parsePrometheusText(await registry.text());
    expect(sampleSum(scrape, "jr2_picks_total", { refusal: "off-menu", agent: "coder" })).toBe(1);
    expect(sampleSum(scrape, "jr2_picks_total", { refusal: "none", state: "coding" })).toBe(1);
  });
});

/** A Turn context over one ledger; `driver` sees what the wrapper hands it. */
function turnContext(ledger: Map<string, LedgerEntry>, faults: string[] = []): TurnContext {
  return {
    runId: "run-1",
    registration,
    ledgerRead: (iid: string) => ledger.get(iid),
    fault: (reason: string) => faults.push(reason),
    shuttingDown: () => false,
  } as unknown as TurnContext;
}

describe("the jr2.turn root span", () => {
  it("opens per Turn, hands its traceparent to the driver and ends when the Turn stops", async () => {
    const { spans, tracing, telemetry, registry } = collecting();
    let seen: string | undefined;
    const inner: TurnDriver = {
      start(context) {
        seen = context.traceparent;
        expect(context.registration).toBe(registration);
        return () => {};
      },
    };
    const stop = traceTurns(inner, telemetry, () => "review").start(turnContext(new Map()));
    stop();
    await tracing.flush();
    const [turn] = spans;
    expect(turn!.name).toBe("jr2.turn");
    expect(turn!.parentSpanContext).toBeUndefined();
    expect(seen).toBe(`00-${turn!.spanContext().traceId}-${turn!.spanContext().spanId}-01`);
    expect(turn!.attributes).toMatchObject({
      "jr2.workflow": "review",
      "jr2.state": "coding",
      "jr2.agent": "coder",
      "jr2.turn_id": "t-1",
      "jr2.run_id": "run-1",
      "jr2.outcome": "ended",
    });
    expect(Object.keys(turn!.attributes)).not.toContain("jr2.iid");
    const scrape = parsePrometheusText(await registry.text());
    expect(sampleSum(scrape, "jr2_turns_started_total", { agent: "coder", state: "coding" })).toBe(1);
    expect(sampleSum(scrape, "jr2_turns_ended_total", { outcome: "ended" })).toBe(1);
  });

  it("continues the trace its ledger entry saved (a restore), and fails on a fault", async () => {
    const { spans, tracing, telemetry } = collecting();
    const ledger = new Map<string, LedgerEntry>([
      [
        registration.iid,
        { turnId: "t-1", submissionId: "s", offset: "0", streamUrl: "/s", traceparent: PARENT },
      ],
    ]);
    const faults: string[] = [];
    const inner: TurnDriver = {
      start(context) {
        context.fault("deadline");
        return () => {};
      },
    };
    traceTurns(inner, telemetry, () => "review").start(turnContext(ledger, faults))();
    await tracing.flush();
    const [turn] = spans;
    expect(turn!.spanContext().traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(turn!.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
    expect(turn!.attributes["jr2.outcome"]).toBe("deadline");
    expect(turn!.status.code).toBe(2); // ERROR
    expect(faults).toEqual(["deadline"]); // passed on to the Turn
  });

  it("is off and free without an endpoint: no traceparent reaches the driver", () => {
    const telemetry: OrchestratorTelemetry = {
      tracing: startTracing({ serviceName: "jr2-orchestrator", env: {} }),
      metrics: createMetrics({ service: "orchestrator" }).orchestrator,
    };
    let seen: string | undefined = "unset";
    traceTurns(
      {
        start(context) {
          seen = context.traceparent;
          return () => {};
        },
      },
      telemetry,
      () => "review",
    ).start(turnContext(new Map()))();
    expect(seen).toBeUndefined();
  });
});

describe("the admission's traceparent", () => {
  it("is sent as the traceparent header when the Turn has one, and not otherwise", async () => {
    const sent: Array<Record<string, string>> = [];
    const fakeFetch = (async (_url: string, init: RequestInit) => {
      sent.push(init.headers as Record<string, string>);
      return new Response(JSON.stringify({}), { status: 500 });
    }) as unknown as typeof fetch;
    const client = createHarnessClient({ url: "http://127.0.0.1:1", token: "t" }, fakeFetch);
    const body = { agent: "coder", kind: "task" } as never;
    await client.admit("run-1/coder", body, PARENT);
    await client.admit("run-1/coder", body);
    expect(sent[0]![TRACEPARENT_HEADER]).toBe(PARENT);
    expect(Object.keys(sent[1]!)).not.toContain(TRACEPARENT_HEADER);
  });
});

describe("jr2 serve's telemetry settings and GET /metrics", () => {
  const token = { JR2_INSTANCE_TOKEN: "a-long-random-token-0123456789" };

  it("reads the OTEL_* variables and JR2_METRICS_TOKEN; refuses a bad endpoint before listening", () => {
    const config = readServeConfig(
      {
        ...token,
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
        JR2_METRICS_TOKEN: "metrics-token-0123456789",
      },
      {},
    );
    expect(config.telemetry?.env).toEqual({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" });
    expect(config.telemetry?.metricsToken).toBe("metrics-token-0123456789");
    expect(() => readServeConfig({ ...token, OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://collector" }, {})).toThrow(
      expect.objectContaining({ code: "JR2_ERR_CONFIG_INVALID" }),
    );
  });

  it("serves /metrics open like /healthz (the instance token is not needed), or behind JR2_METRICS_TOKEN", async () => {
    const registry = createMetrics({ service: "orchestrator" });
    const telemetry = {
      tracing: startTracing({ serviceName: "o", env: {} }),
      metrics: registry.orchestrator,
      registry,
    };
    const open = await buildOrchestrator({ auth: { instanceToken: token.JR2_INSTANCE_TOKEN }, telemetry });
    const res = await open.inject({ method: "GET", url: "/metrics" });
    expect(res.statusCode).toBe(200);
    expect(parsePrometheusText(res.body).types.jr2_picks_total).toBe("counter");
    await open.close();
    const closed = await buildOrchestrator({
      auth: { instanceToken: token.JR2_INSTANCE_TOKEN },
      telemetry: { ...telemetry, token: "metrics-token-0123456789" },
    });
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
    expect(
      (await closed.inject({ url: "/metrics", headers: bearer(token.JR2_INSTANCE_TOKEN) })).statusCode,
    ).toBe(401);
    expect(
      (await closed.inject({ url: "/metrics", headers: bearer("metrics-token-0123456789") })).statusCode,
    ).toBe(200);
    await closed.close();
  });
});
