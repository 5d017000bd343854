/**
 * The Harness's telemetry (issue 11 item 5, ADR-0420): an admission's `traceparent` is
 * continued by a `jr2.submission` span and a `chat <model>` span per model request with the
 * GenAI usage the upstream reported (omitted where it reported none); the Submission's span
 * travels on its surface reads and picks; `/metrics` counts what the upstream reported, open
 * like /healthz or behind JR2_METRICS_TOKEN, never the Harness's bearer.
 */
import { METRIC_LABELS, parsePrometheusText, sampleSum, startTracing, type Tracing } from "@jr2/telemetry";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "@jr2/telemetry/testing";
import type { StreamEvent } from "@jr2/wire";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeOrchestrator,
  answer as pickAnswer,
  startFakeOrchestrator,
} from "./fixtures/fake-orchestrator.js";
import { auth, harnessFor } from "./fixtures/harness.js";
import { answer, chunk, type ScriptedUpstream, startScriptedUpstream } from "./fixtures/scripted-upstream.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const TURN_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${TURN_SPAN}-01`;
const IID = "r-telemetry/coder";
const PROMPT = "Review the change in telemetry.";

let upstream: ScriptedUpstream;
let orch: FakeOrchestrator;
let receiver: OtlpReceiver;
beforeEach(async () => {
  upstream = await startScriptedUpstream();
  orch = await startFakeOrchestrator();
  receiver = await startOtlpReceiver();
  // First pick: delivered, the Turn goes on; the second ends it.
  let picks = 0;
  orch.answer = () =>
    ++picks === 1
      ? pickAnswer({ allowed: ["approve", "request_changes"], turnComplete: false })
      : pickAnswer({ allowed: [], turnComplete: true });
  upstream.script([
    {
      sse: answer({
        toolCalls: [{ name: "request_changes", arguments: '{"notes":"add a test"}' }],
        usage: chunk([], {
          usage: { prompt_tokens: 100, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 0 } },
        }),
      }),
    },
    {
      // vLLM without --enable-prompt-tokens-details: cached tokens not reported (ADR-0400).
      sse: answer({
        toolCalls: [{ name: "approve", arguments: '{"summary":"ok"}' }],
        usage: chunk([], { usage: { prompt_tokens: 130, completion_tokens: 5 } }),
      }),
    },
  ]);
});
afterEach(async () => {
  await upstream.close();
  await orch.close();
  await receiver.close();
});

/** A Harness on the scripted upstream (model entry `sim`, id `tiny-qwen3`). */
function harness(extra: Record<string, unknown> = {}) {
  return harnessFor(upstream, orch, {
    models: {
      sim: {
        baseUrl: upstream.baseUrl,
        id: "tiny-qwen3",
        contextWindow: 40960,
        maxTokens: 1024,
        temperature: 0,
      },
    },
    ...extra,
  });
}

/** Admits one Submission (with `headers`) and waits for its settlement. */
async function admitOne(h: ReturnType<typeof harness>, headers: Record<string, string>) {
  const res = await h.app.inject({
    method: "POST",
    url: `/conversations/${encodeURIComponent(IID)}/submissions`,
    headers: { ...auth, ...headers },
    payload: {
      agent: "coder",
      kind: "task",
      turnId: "turn-1",
      definition: { model: "sim", instructions: "You review code.", workspace: "none" },
      prompt: PROMPT,
    },
  });
  expect(res.statusCode).toBe(200);
  const a = res.json() as { submissionId: string; offset: string };
  return { submissionId: a.submissionId, ...(await h.settled(IID, a.submissionId, a.offset)) };
}

const usageOf = (events: StreamEvent[]) => events.filter((e) => e.type === "usage");
const traceparentOf = (r: FakeOrchestrator["requests"][number]) => r.headers.traceparent;

describe("traces: one Turn is one trace across the hop", () => {
  let tracing: Tracing;
  beforeEach(() => {
    tracing = startTracing({
      serviceName: "jr2-harness",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
  });
  afterEach(async () => tracing.shutdown());

  it("the admission's traceparent parents the Submission span; each model request is its child with the reported usage", async () => {
    const h = harness({ tracing });
    const { settlement, events } = await admitOne(h, { traceparent: TRACEPARENT });
    expect(settlement.outcome).toBe("completed");
    expect(usageOf(events)).toHaveLength(2);
    await tracing.flush();

    const spans = receiver.spans;
    expect(receiver.contentTypes.every((t) => t.startsWith("application/json"))).toBe(true);
    expect(spans.every((s) => s.traceId === TRACE_ID && s.service === "jr2-harness")).toBe(true);
    const submission = spans.find((s) => s.name === "jr2.submission") as ReceivedSpan;
    expect(submission).toMatchObject({
      parentSpanId: TURN_SPAN,
      attributes: {
        "jr2.turn_id": "turn-1",
        "jr2.agent": "coder",
        "jr2.model_entry": "sim",
        "jr2.submission.kind": "task",
        "jr2.outcome": "completed",
      },
    });
    const requests = spans.filter((s) => s.name === "chat tiny-qwen3");
    expect(requests).toHaveLength(2);
    expect(requests.every((s) => s.parentSpanId === submission.spanId)).toBe(true);
    const [first, second] = requests.sort(
      (a, b) =>
        Number(a.attributes["gen_ai.usage.input_tokens"]) - Number(b.attributes["gen_ai.usage.input_tokens"]),
    );
    expect(first!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "tiny-qwen3",
      "gen_ai.usage.input_tokens": 100,
      "gen_ai.usage.cache_read.input_tokens": 0,
      "gen_ai.usage.output_tokens": 10,
      "gen_ai.response.finish_reasons": ["tool_calls"],
      "jr2.model_entry": "sim",
      "jr2.attempts": 1,
    });
    expect(second!.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 130,
      "gen_ai.usage.output_tokens": 5,
      "jr2.usage.unreported": ["cachedTokens"],
    });
    // Not reported: omitted, never 0.
    expect("gen_ai.usage.cache_read.input_tokens" in second!.attributes).toBe(false);

    // Content capture is off: no iid, prompt or arguments on any span.
    const exported = JSON.stringify(spans);
    for (const secret of [IID, PROMPT, "add a test", "jr2.iid", "gen_ai.input.messages"])
      expect(exported).not.toContain(secret);

    // The Submission's span travels on its surface reads and picks to the Orchestrator.
    expect(orch.requests.map((r) => r.kind)).toEqual(expect.arrayContaining(["surface", "pick"]));
    for (const r of orch.requests) expect(traceparentOf(r)).toBe(`00-${TRACE_ID}-${submission.spanId}-01`);
    await h.app.close();
  });

  it("a failed model request: its span and the Submission's are errors with a type, never the server's text; counted as `error`", async () => {
    upstream.script([{ status: 400, body: '{"error":{"message":"the prompt was: secret plans"}}' }]);
    const h = harness({ tracing });
    const { settlement } = await admitOne(h, { traceparent: TRACEPARENT });
    expect(settlement.outcome).toBe("failed");
    await tracing.flush();
    const request = receiver.spans.find((s) => s.name === "chat tiny-qwen3");
    expect(request?.status?.code).toBe(2);
    expect(request?.attributes["error.type"]).toBe("provider");
    const submission = receiver.spans.find((s) => s.name === "jr2.submission");
    expect(submission?.status?.code).toBe(2);
    expect(submission?.attributes["jr2.outcome"]).toBe("failed");
    expect(JSON.stringify(receiver.spans)).not.toContain("secret plans");
    const scrape = parsePrometheusText((await h.app.inject({ method: "GET", url: "/metrics" })).body);
    expect(sampleSum(scrape, "jr2_model_requests_total", { model: "sim", finish_reason: "error" })).toBe(1);
    expect(sampleSum(scrape, "jr2_submissions_settled_total", { model: "sim", outcome: "failed" })).toBe(1);
    await h.app.close();
  });

  it("a continued conversation: each Submission's model requests are children of its own span", async () => {
    const h = harness({ tracing });
    await admitOne(h, { traceparent: TRACEPARENT });
    upstream.script([{ sse: answer({ toolCalls: [{ name: "approve", arguments: '{"summary":"ok"}' }] }) }]);
    orch.answer = () => pickAnswer({ allowed: [], turnComplete: true });
    const second = `00-${"a".repeat(32)}-${"b".repeat(16)}-01`;
    await admitOne(h, { traceparent: second });
    await tracing.flush();
    const submissions = receiver.spans.filter((s) => s.name === "jr2.submission");
    expect(submissions.map((s) => s.traceId)).toEqual([TRACE_ID, "a".repeat(32)]);
    for (const sub of submissions) {
      const children = receiver.spans.filter((s) => s.parentSpanId === sub.spanId);
      expect(children.length).toBeGreaterThan(0);
      expect(children.every((c) => c.traceId === sub.traceId && c.name === "chat tiny-qwen3")).toBe(true);
    }
    expect(receiver.spans.filter((s) => s.name === "chat tiny-qwen3")).toHaveLength(3);
    await h.app.close();
  });

  it("without a traceparent the Submission starts its own trace", async () => {
    const h = harness({ tracing });
    await admitOne(h, {});
    await tracing.flush();
    const submission = receiver.spans.find((s) => s.name === "jr2.submission");
    expect(submission?.parentSpanId).toBeUndefined();
    expect(submission?.traceId).not.toBe(TRACE_ID);
    await h.app.close();
  });

  it("with JR2_OTEL_CAPTURE_CONTENT=true the spans carry the iid and the messages", async () => {
    const capturing = startTracing({
      serviceName: "jr2-harness",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, JR2_OTEL_CAPTURE_CONTENT: "true" },
    });
    const h = harness({ tracing: capturing });
    await admitOne(h, { traceparent: TRACEPARENT });
    await capturing.shutdown();
    const submission = receiver.spans.find((s) => s.name === "jr2.submission");
    expect(submission?.attributes["jr2.iid"]).toBe(IID);
    const request = receiver.spans.find((s) => s.name === "chat tiny-qwen3");
    expect(String(request?.attributes["gen_ai.input.messages"])).toContain(PROMPT);
    await h.app.close();
  });
});

describe("tracing off (the default)", () => {
  it("nothing is exported, and the Orchestrator's traceparent passes through to the reads and picks", async () => {
    const h = harness();
    await admitOne(h, { traceparent: TRACEPARENT });
    expect(receiver.spans).toEqual([]);
    expect(orch.requests.length).toBeGreaterThan(0);
    for (const r of orch.requests) expect(traceparentOf(r)).toBe(TRACEPARENT);
    await h.app.close();
  });

  it("no traceparent in, none out", async () => {
    const h = harness();
    await admitOne(h, {});
    expect(orch.requests.length).toBeGreaterThan(0);
    for (const r of orch.requests) expect(traceparentOf(r)).toBeUndefined();
    await h.app.close();
  });
});

describe("GET /metrics", () => {
  const METRICS_TOKEN = "metrics-scrape-token-0123456789";

  it("parses as Prometheus text; its counters match what the upstream reported; labels only from the allowed set", async () => {
    const h = harness();
    await admitOne(h, {});
    const res = await h.app.inject({ method: "GET", url: "/metrics" });
    expect(res.statusCode).toBe(200);
    const scrape = parsePrometheusText(res.body);
    const sim = { model: "sim" };
    expect(sampleSum(scrape, "jr2_model_requests_total", { ...sim, finish_reason: "tool_calls" })).toBe(2);
    expect(sampleSum(scrape, "jr2_model_requests_total")).toBe(2);
    expect(sampleSum(scrape, "jr2_model_prompt_tokens_total", sim)).toBe(230);
    expect(sampleSum(scrape, "jr2_model_cached_tokens_total", sim)).toBe(0);
    expect(sampleSum(scrape, "jr2_model_output_tokens_total", sim)).toBe(15);
    expect(sampleSum(scrape, "jr2_model_usage_unreported_total", sim)).toBe(1);
    expect(sampleSum(scrape, "jr2_submissions_settled_total", { ...sim, outcome: "completed" })).toBe(1);
    expect(
      scrape.samples.some((s) => s.name === "jr2_endpoint_queue_depth" && s.labels.model === "sim"),
    ).toBe(true);
    expect(sampleSum(scrape, "jr2_endpoint_queue_depth")).toBe(0);
    for (const s of scrape.samples)
      for (const label of Object.keys(s.labels)) expect(METRIC_LABELS as readonly string[]).toContain(label);
    // Never an iid, a turnId or a URL.
    for (const text of [IID, "turn-1", upstream.baseUrl, "127.0.0.1"]) expect(res.body).not.toContain(text);
    // Only the Harness's families.
    expect(scrape.samples.some((s) => s.name.startsWith("jr2_runs"))).toBe(false);
    await h.app.close();
  });

  it("open without JR2_METRICS_TOKEN, like /healthz; with it, the Harness's bearer does not open it", async () => {
    const open = harness();
    expect((await open.app.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(200);
    await open.app.close();
    const closed = harness({ metricsToken: METRICS_TOKEN });
    const get = (headers: Record<string, string>) =>
      closed.app.inject({ method: "GET", url: "/metrics", headers });
    expect((await get({})).statusCode).toBe(401);
    const withHarnessBearer = await get(auth);
    expect(withHarnessBearer.statusCode).toBe(401);
    expect(withHarnessBearer.json()).toMatchObject({ code: "JR2_ERR_AUTH_INVALID" });
    expect((await get({ authorization: `Bearer ${METRICS_TOKEN}` })).statusCode).toBe(200);
    // The metrics token opens nothing else.
    const history = await closed.app.inject({
      method: "GET",
      url: `/conversations/${encodeURIComponent(IID)}/history`,
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(history.statusCode).toBe(401);
    await closed.app.close();
  });
});
