import { type OtlpReceiver, startOtlpReceiver } from "@jr2/telemetry/testing";
import * as incubating from "@opentelemetry/semantic-conventions/incubating";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CONTENT_ATTRIBUTE_MAX,
  contentAttributes,
  contextFromTraceparent,
  extractTraceparent,
  GEN_AI,
  JR2_ATTR,
  readTracingSettings,
  SPAN_NAMES,
  startTracing,
  TRACING_OFF,
  traceHeaders,
  traceparentOf,
  usageAttributes,
  withSpan,
} from "../src/index.js";

const PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("tracing is off and free unless an OTLP endpoint is set", () => {
  it("no endpoint: the no-op tracer, nothing recorded, flush and shutdown resolve", async () => {
    const tracing = startTracing({ serviceName: "jr2-test", env: {} });
    expect(tracing).toBe(TRACING_OFF);
    expect(tracing.enabled).toBe(false);
    const span = tracing.tracer.startSpan("x");
    expect(span.isRecording()).toBe(false);
    span.setAttribute("a", 1);
    span.end();
    await tracing.flush();
    await tracing.shutdown();
  });

  it("off, a remote parent passes through: a child keeps the caller's trace", () => {
    const parent = extractTraceparent({ traceparent: PARENT });
    const span = TRACING_OFF.tracer.startSpan("child", {}, parent);
    expect(traceparentOf(withSpan(parent, span))).toBe(PARENT);
  });

  it("OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn an endpoint off", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };
    expect(startTracing({ serviceName: "s", env: { ...endpoint, OTEL_SDK_DISABLED: "true" } }).enabled).toBe(
      false,
    );
    expect(
      startTracing({ serviceName: "s", env: { ...endpoint, OTEL_TRACES_EXPORTER: "none" } }).enabled,
    ).toBe(false);
  });

  it("reads the endpoint as the OTLP spec says: base + /v1/traces, or the traces URL as given", () => {
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" }).url).toBe(
      "http://c:4318/v1/traces",
    );
    expect(
      readTracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://d:9/x",
      }).url,
    ).toBe("http://d:9/x");
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%20b,bad,x=1" }).headers).toEqual({
      "api-key": "a b",
      x: "1",
    });
    expect(() => readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http/,
    );
  });
});

describe("exported over OTLP/HTTP JSON when on", () => {
  let receiver: OtlpReceiver;
  beforeEach(async () => {
    receiver = await startOtlpReceiver();
  });
  afterEach(async () => receiver.close());

  it("a span continued from a traceparent reaches the receiver as JSON, in the caller's trace", async () => {
    const tracing = startTracing({
      serviceName: "jr2-test",
      serviceVersion: "0.1.0",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    expect(tracing.enabled).toBe(true);
    const span = tracing.tracer.startSpan(
      SPAN_NAMES.SUBMISSION,
      { attributes: { [JR2_ATTR.TURN_ID]: "t1" } },
      extractTraceparent({ traceparent: PARENT }),
    );
    const headers = traceHeaders(withSpan(extractTraceparent({}), span));
    span.end();
    await tracing.shutdown();
    expect(receiver.paths).toEqual(["/v1/traces"]);
    expect(receiver.contentTypes[0]).toMatch(/^application\/json/);
    const [got] = receiver.spans;
    expect(got).toMatchObject({
      service: "jr2-test",
      name: "jr2.submission",
      traceId: "0af7651916cd43dd8448eb211c80319c",
      parentSpanId: "b7ad6b7169203331",
      attributes: { "jr2.turn_id": "t1" },
    });
    expect(headers.traceparent).toBe(`00-0af7651916cd43dd8448eb211c80319c-${got!.spanId}-01`);
  });
});

describe("traceparent helpers", () => {
  it("a malformed or absent header starts a new trace (ROOT): nothing to inject", () => {
    expect(traceHeaders(extractTraceparent({}))).toEqual({});
    expect(traceHeaders(extractTraceparent({ traceparent: "garbage" }))).toEqual({});
    expect(traceparentOf(contextFromTraceparent("00-zz-yy-01"))).toBeUndefined();
  });

  it("a stored traceparent (a Turn's, from its ledger entry) round-trips with its tracestate", () => {
    const ctx = contextFromTraceparent(PARENT, "jr2=1");
    expect(traceHeaders(ctx)).toEqual({ traceparent: PARENT, tracestate: "jr2=1" });
  });
});

describe("attributes", () => {
  it("the GenAI names are the semantic conventions' (pinned to the installed incubating entry)", () => {
    expect(GEN_AI.OPERATION_NAME).toBe(incubating.ATTR_GEN_AI_OPERATION_NAME);
    expect(GEN_AI.PROVIDER_NAME).toBe(incubating.ATTR_GEN_AI_PROVIDER_NAME);
    expect(GEN_AI.REQUEST_MODEL).toBe(incubating.ATTR_GEN_AI_REQUEST_MODEL);
    expect(GEN_AI.RESPONSE_MODEL).toBe(incubating.ATTR_GEN_AI_RESPONSE_MODEL);
    expect(GEN_AI.REQUEST_MAX_TOKENS).toBe(incubating.ATTR_GEN_AI_REQUEST_MAX_TOKENS);
    expect(GEN_AI.REQUEST_TEMPERATURE).toBe(incubating.ATTR_GEN_AI_REQUEST_TEMPERATURE);
    expect(GEN_AI.USAGE_INPUT_TOKENS).toBe(incubating.ATTR_GEN_AI_USAGE_INPUT_TOKENS);
    expect(GEN_AI.USAGE_CACHED_INPUT_TOKENS).toBe(incubating.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS);
    expect(GEN_AI.USAGE_OUTPUT_TOKENS).toBe(incubating.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS);
    expect(GEN_AI.RESPONSE_FINISH_REASONS).toBe(incubating.ATTR_GEN_AI_RESPONSE_FINISH_REASONS);
    expect(GEN_AI.INPUT_MESSAGES).toBe(incubating.ATTR_GEN_AI_INPUT_MESSAGES);
    expect(GEN_AI.OUTPUT_MESSAGES).toBe(incubating.ATTR_GEN_AI_OUTPUT_MESSAGES);
    expect(GEN_AI.CONVERSATION_ID).toBe(incubating.ATTR_GEN_AI_CONVERSATION_ID);
  });

  it("usage not reported is omitted, never 0 (ADR-0400)", () => {
    expect(usageAttributes({ promptTokens: 568, cachedTokens: null, completionTokens: 0 })).toEqual({
      "gen_ai.usage.input_tokens": 568,
      "gen_ai.usage.output_tokens": 0,
    });
  });

  it("content only with JR2_OTEL_CAPTURE_CONTENT=true, and cut past the cap", () => {
    expect(readTracingSettings({}).captureContent).toBe(false);
    expect(readTracingSettings({ JR2_OTEL_CAPTURE_CONTENT: "true" }).captureContent).toBe(true);
    expect(readTracingSettings({ JR2_OTEL_CAPTURE_CONTENT: "1" }).captureContent).toBe(false);
    expect(startTracing({ serviceName: "s", env: { JR2_OTEL_CAPTURE_CONTENT: "true" } }).captureContent).toBe(
      true,
    );
    expect(contentAttributes({ captureContent: false }, { [JR2_ATTR.IID]: "r1/coder" })).toEqual({});
    const long = "x".repeat(CONTENT_ATTRIBUTE_MAX + 5);
    const on = contentAttributes({ captureContent: true }, { a: "r1/coder", b: long, c: undefined });
    expect(on.a).toBe("r1/coder");
    expect(String(on.b)).toMatch(new RegExp(`…\\[cut, ${CONTENT_ATTRIBUTE_MAX + 5} characters\\]$`));
    expect("c" in on).toBe(false);
  });
});
