/**
 * Issue 11 item 5 "Done when", on the real stack: both services export OTLP/HTTP JSON to a
 * receiver on 127.0.0.1 in this test; one `review` run yields one trace per Turn spanning both
 * services (the Orchestrator's `jr2.turn` root, the Harness's `jr2.submission` and `chat …`
 * children with their token counts, the Orchestrator's `jr2.pick` spans), no content on any span;
 * the Orchestrator's `/metrics` parses as Prometheus text and its counters match the run
 * (picks, model requests, tokens equal to the run's usage totals). Needs `pnpm build`.
 * @see ADR-0420, ADR-0421
 */
import { fileURLToPath } from "node:url";
import { parsePrometheusText, sampleSum } from "@jr2/telemetry";
import { startOtlpReceiver } from "@jr2/telemetry/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, startStack } from "../../../conformance/src/index.js";
import { reviewModels } from "./example-models.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
type Json = Record<string, any>;

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../fixtures/plain-review/", import.meta.url));
const missing = missingBinaries(repoRoot, "process");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function http(stack: Stack, path: string, init: RequestInit = {}) {
  const res = await fetch(`${stack.orchestratorUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as Json | null };
}

/** Drives the run to its end (answering `merge_gate` with `merge`), then waits out its usage. */
async function driveToEnd(stack: Stack, runId: string) {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const { body } = await http(stack, `/runs/${runId}`);
    if (body && body.status !== "running") break;
    for (const gate of (body?.gates as Array<{ id: string; acceptsNow: string[] }>) ?? [])
      if (gate.id === "merge_gate" && gate.acceptsNow.includes("merge"))
        await http(stack, `/runs/${runId}/gates/${gate.id}/events`, {
          method: "POST",
          body: JSON.stringify({ type: "merge" }),
        });
    if (Date.now() > deadline) throw new Error(`run ${runId} did not end: ${JSON.stringify(body)}`);
    await sleep(50);
  }
  let last = "";
  for (let stable = 0; stable < 10; ) {
    const now = JSON.stringify((await http(stack, `/runs/${runId}`)).body?.usage);
    stable = now === last ? stable + 1 : 0;
    last = now;
    await sleep(100);
  }
  return (await http(stack, `/runs/${runId}`)).body!;
}

describe.skipIf(missing.length > 0)(
  "telemetry of a review run across both services (issue 11 item 5)",
  () => {
    let stack: Stack | undefined;
    let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;

    beforeAll(async () => {
      receiver = await startOtlpReceiver();
      const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "200" };
      stack = await startStack("process", {
        repoRoot,
        workflowsDir,
        orchestratorEnv: otel,
        harnessEnv: otel,
        models: reviewModels,
      });
    }, 120_000);
    afterAll(async () => {
      await stack?.close();
      await receiver?.close();
    });

    it("exports one trace per Turn spanning both services, and /metrics matches the run", async () => {
      const started = await http(stack!, "/workflows/review/runs", {
        method: "POST",
        body: JSON.stringify({ input: { task: "a hello() function in hello.js" } }),
      });
      expect(started.status).toBe(201);
      const runId = started.body!.runId as string;
      const run = await driveToEnd(stack!, runId);
      expect(run.status).toBe("done");
      const usage = run.usage as Json;
      expect(usage.requests).toBeGreaterThan(0);

      // The feed's picks: what the pick counter and the pick spans must match.
      const feed = await fetch(`${stack!.orchestratorUrl}/runs/${runId}/events`, {
        headers: { authorization: `Bearer ${stack!.instanceToken}` },
      }).then((r) => r.text());
      const picks = feed.split("\n").filter((l) => l === "event: pick").length;
      expect(picks).toBeGreaterThan(0);

      // /metrics: open like /healthz, Prometheus text, counters equal to the run's.
      const res = await fetch(`${stack!.orchestratorUrl}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/plain");
      const scrape = parsePrometheusText(await res.text());
      expect(sampleSum(scrape, "jr2_runs_started_total", { workflow: "review" })).toBe(1);
      expect(sampleSum(scrape, "jr2_runs_settled_total", { workflow: "review", status: "done" })).toBe(1);
      expect(sampleSum(scrape, "jr2_picks_total", { workflow: "review" })).toBe(picks);
      expect(sampleSum(scrape, "jr2_turn_model_requests_total", { workflow: "review" })).toBe(usage.requests);
      expect(sampleSum(scrape, "jr2_turn_prompt_tokens_total")).toBe(usage.promptTokens);
      expect(sampleSum(scrape, "jr2_turn_cached_tokens_total")).toBe(usage.cachedTokens);
      expect(sampleSum(scrape, "jr2_turn_output_tokens_total")).toBe(usage.completionTokens);
      const turns = sampleSum(scrape, "jr2_turns_started_total", { workflow: "review" });
      expect(turns).toBeGreaterThanOrEqual(3); // coder, reviewer (changes), coder, reviewer (approve)
      expect(sampleSum(scrape, "jr2_turns_ended_total", { workflow: "review" })).toBe(turns);
      for (const s of scrape.samples)
        for (const label of Object.keys(s.labels))
          expect([
            "workflow",
            "agent",
            "state",
            "model",
            "status",
            "outcome",
            "refusal",
            "finish_reason",
          ]).toContain(label);

      // Both services flush their spans on stop.
      await stack!.close();
      stack = undefined;
      const spans = receiver.spans;
      expect(receiver.contentTypes.every((t) => t.startsWith("application/json"))).toBe(true);
      const roots = spans.filter((s) => s.name === "jr2.turn");
      expect(roots).toHaveLength(turns);
      expect(new Set(roots.map((r) => r.traceId)).size).toBe(roots.length); // one trace per Turn
      for (const root of roots) {
        expect(root.service).toBe("jr2-orchestrator");
        expect(root.parentSpanId).toBeUndefined();
        expect(root.attributes).toMatchObject({ "jr2.workflow": "review", "jr2.run_id": runId });
        expect(root.attributes["jr2.state"]).toEqual(expect.any(String));
        expect(root.attributes["jr2.agent"]).toEqual(expect.any(String));
        expect(root.attributes["jr2.turn_id"]).toEqual(expect.any(String));
        const trace = spans.filter((s) => s.traceId === root.traceId);
        const submissions = trace.filter((s) => s.name === "jr2.submission");
        expect(submissions.length).toBeGreaterThan(0);
        for (const sub of submissions) {
          expect(sub.service).toBe("jr2-harness");
          expect(sub.parentSpanId).toBe(root.spanId);
        }
        const requests = trace.filter((s) => s.name.startsWith("chat "));
        expect(requests.length).toBeGreaterThan(0);
        for (const r of requests) {
          expect(r.attributes["gen_ai.usage.input_tokens"]).toEqual(expect.any(Number));
          expect(r.attributes["gen_ai.usage.output_tokens"]).toEqual(expect.any(Number));
        }
      }
      const pickSpans = spans.filter((s) => s.name === "jr2.pick");
      expect(pickSpans).toHaveLength(picks);
      const traces = new Set(roots.map((r) => r.traceId));
      const submissionIds = new Set(spans.filter((s) => s.name === "jr2.submission").map((s) => s.spanId));
      for (const p of pickSpans) {
        expect(p.service).toBe("jr2-orchestrator");
        expect(traces.has(p.traceId)).toBe(true);
        // Under the Harness's Submission span, whose traceparent the pick request carried.
        expect(submissionIds.has(p.parentSpanId ?? "")).toBe(true);
        expect(p.attributes["jr2.pick.name"]).toEqual(expect.any(String));
        expect(typeof p.attributes["jr2.pick.moved"]).toBe("boolean");
      }
      // Token counts on the spans add up to the run's totals.
      const requestSpans = spans.filter((s) => s.name.startsWith("chat "));
      const sum = (key: string) => requestSpans.reduce((n, s) => n + Number(s.attributes[key] ?? 0), 0);
      expect(sum("gen_ai.usage.input_tokens")).toBe(usage.promptTokens);
      expect(sum("gen_ai.usage.output_tokens")).toBe(usage.completionTokens);
      // No content without JR2_OTEL_CAPTURE_CONTENT=true: no iid, no arguments, no messages.
      for (const s of spans) {
        expect(Object.keys(s.attributes)).not.toContain("jr2.iid");
        expect(Object.keys(s.attributes)).not.toContain("jr2.pick.arguments");
        expect(Object.keys(s.attributes)).not.toContain("gen_ai.input.messages");
        expect(Object.keys(s.attributes)).not.toContain("gen_ai.conversation.id");
      }
      expect(JSON.stringify(spans)).not.toContain("hello.js");
    }, 150_000);
  },
);

describe.skipIf(missing.length > 0)("a restored Turn continues its trace (ADR-0421)", () => {
  let stack: Stack | undefined;
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  const otel = () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "200" });

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    stack = await startStack("process", {
      repoRoot,
      workflowsDir,
      orchestratorEnv: otel(),
      harnessEnv: otel(),
      models: reviewModels,
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  it("opens the restored Turn's jr2.turn in the trace its ledger entry saved", async () => {
    const s = stack!;
    await s.killOrchestrator();
    await s.startOrchestrator({ JR2_CRASH_AT: "ledgered:1" });
    const logStart = s.orchestratorLog().length;
    void http(s, "/workflows/review/runs", {
      method: "POST",
      body: JSON.stringify({ input: { task: "a hello() function in hello.js" } }),
    }).catch(() => {}); // the answer may never come: the process dies on the way
    const deadline = Date.now() + 60_000;
    while (!s.orchestratorLog().slice(logStart).includes("jr2 crash-point ledgered")) {
      if (Date.now() > deadline) throw new Error("the Orchestrator never reached ledgered");
      await sleep(30);
    }
    await s.killOrchestrator();
    await s.startOrchestrator();
    const runs = (await http(s, "/runs")).body as unknown as Array<{ runId: string }>;
    const runId = runs[0]!.runId;
    expect((await driveToEnd(s, runId)).status).toBe("done");
    await s.close();
    stack = undefined;

    const spans = receiver.spans;
    // The first life was killed before its jr2.turn ended: only the Harness's side of it was
    // exported. The restored Turn's root is a child of that saved root, in the same trace.
    const restored = spans.filter((x) => x.name === "jr2.turn" && x.parentSpanId !== undefined);
    expect(restored).toHaveLength(1);
    const [turn] = restored;
    const firstLife = spans.filter(
      (x) => x.name === "jr2.submission" && x.parentSpanId === turn!.parentSpanId,
    );
    expect(firstLife.length).toBeGreaterThan(0);
    expect(firstLife.every((x) => x.traceId === turn!.traceId)).toBe(true);
    expect(turn!.attributes["jr2.run_id"]).toBe(runId);
  }, 150_000);
});
