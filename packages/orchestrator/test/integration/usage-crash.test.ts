/**
 * Issue 16 item 4 / "Totals without double counting", on the real stack: a run whose
 * Orchestrator is SIGKILLed mid-flight (the crash harness's `JR2_CRASH_AT` points) and restarted
 * reports the same model requests as an uninterrupted run and, to the token, exactly what
 * model-sim reported for that run's requests — nothing lost, nothing counted twice (token counts
 * differ per run: the prompts carry the run's ids and model-sim's prefix cache is shared). Before, totals were summed from the in-memory feed: 0 after a restart, or only
 * what was read after it. And its durable event log (issue 11 done-when) holds exactly one
 * `usage` event per request model-sim answered for it, summing to the same totals — after a
 * kill at `ledgered` and after a kill at a random moment while a model request is in flight
 * (model-sim's `latency` fault holds each answer back). A kill in the admit-sent window runs
 * the Turn's task twice (the first Submission was never ledgered): there only the log-against-
 * model-sim sums are compared — the unledgered Submission's requests are read and counted too
 * (ADR-0257 "catch-up"), its shape differs from an uninterrupted run's.
 * Needs the built binaries (`pnpm build`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, startStack } from "../../../conformance/src/index.js";
import type { CrashPhase } from "../../src/durability/crash-points.js";
import { exampleModels } from "./example-models.js";

/** Model-sim holds each answer back this long (ms): a kill can land while a request is in flight. */
const LATENCY_MS = 250;
const slowedModels = (baseUrl: string) =>
  Object.fromEntries(
    Object.entries(exampleModels(baseUrl)).map(([name, m]) => [
      name,
      { ...m, id: `${m.id}+latency:${LATENCY_MS}` },
    ]),
  );

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
type Json = Record<string, any>;

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../fixtures/plain-review/", import.meta.url));
const missing = missingBinaries(repoRoot, "process");

const WORKFLOWS = {
  review: { input: { task: "a hello() function in hello.js" }, gates: { merge_gate: "merge" } },
  // The triager's Allowed picks are empty until its Gate is answered: answered before its first
  // model request, the Turn takes one request; after it, two (the wake). The Gate waits for the
  // first request so every run of the test takes the same path.
  triage: {
    input: { report: "the login page is blank" },
    gates: { confirm_gate: "confirm" },
    gateAfterFirstRequest: true,
  },
} as const;
type Workflow = keyof typeof WORKFLOWS;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(missing.length > 0)("usage totals of a run killed mid-flight (issue 16 item 4)", () => {
  let stack: Stack;
  let dataDir: string;
  /** Model requests of an uninterrupted run, per workflow (measured by the first test). */
  const baselineRequests = new Map<Workflow, number>();

  async function http(path: string, init: RequestInit = {}) {
    try {
      const res = await fetch(`${stack.orchestratorUrl}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
        signal: AbortSignal.timeout(10_000),
      });
      return { status: res.status, body: (await res.json().catch(() => null)) as Json | null };
    } catch {
      return { status: 0, body: null }; // down (killed)
    }
  }
  async function startRun(workflow: Workflow): Promise<string | undefined> {
    const res = await http(`/workflows/${workflow}/runs`, {
      method: "POST",
      body: JSON.stringify({ input: WORKFLOWS[workflow].input }),
    });
    return res.status === 201 ? (res.body?.runId as string) : undefined;
  }
  /** Answers the run's open Gates; `seq` is model-sim's request count before the run started. */
  async function answerGates(workflow: Workflow, runId: string, body: Json, seq: number) {
    const spec: { gates: Record<string, string>; gateAfterFirstRequest?: boolean } = WORKFLOWS[workflow];
    if (spec.gateAfterFirstRequest && (await stack.requests()).length <= seq) return;
    const gates = spec.gates;
    for (const gate of (body.gates as Array<{ id: string; acceptsNow: string[] }>) ?? []) {
      const event = gates[gate.id];
      if (event && gate.acceptsNow.includes(event))
        await http(`/runs/${runId}/gates/${gate.id}/events`, {
          method: "POST",
          body: JSON.stringify({ type: event }),
        });
    }
  }
  /** Drives the run to its end; then waits out the drain of its last Turn's usage. */
  async function driveToEnd(workflow: Workflow, runId: string, seq: number) {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { status, body } = await http(`/runs/${runId}`);
      if (status === 200 && body) {
        if (body.status !== "running") break;
        await answerGates(workflow, runId, body, seq);
      }
      if (Date.now() > deadline) throw new Error(`run ${runId} did not end: ${JSON.stringify(body)}`);
      await sleep(50);
    }
    // The last Submission settles right after the pick that ended the run: its usage follows.
    let last = "";
    for (let stable = 0; stable < 10; ) {
      const now = JSON.stringify((await http(`/runs/${runId}`)).body?.usage);
      stable = now === last ? stable + 1 : 0;
      last = now;
      await sleep(100);
    }
    const { body } = await http(`/runs/${runId}`);
    return { status: body?.status, value: body?.value, usage: body?.usage };
  }
  /** What model-sim reported for the requests it answered after `seq`: the provider's totals. */
  async function providerTotals(seq: number) {
    // The conformance type names only the fields it reads; model-sim sends all of OpenAI's.
    type Usage = {
      prompt_tokens: number;
      completion_tokens: number;
      prompt_tokens_details: { cached_tokens: number };
    };
    const answered = (await stack.requests())
      .filter((r) => r.seq > seq && r.status === 200 && r.usage)
      .map((r) => r.usage as unknown as Usage);
    return {
      promptTokens: answered.reduce((n, u) => n + u.prompt_tokens, 0),
      cachedTokens: answered.reduce((n, u) => n + u.prompt_tokens_details.cached_tokens, 0),
      completionTokens: answered.reduce((n, u) => n + u.completion_tokens, 0),
      requests: answered.length,
    };
  }
  /**
   * What an interrupted run shares with an uninterrupted one: its end and its model requests.
   * Token counts are per run (the prompts carry the run's ids; the prefix cache is shared), so
   * they are compared with model-sim's recordings of that very run.
   */
  const shape = (final: { status?: unknown; value?: unknown; usage?: Json }) => ({
    status: final.status,
    value: final.value,
    requests: final.usage?.requests,
  });
  const jr2Totals = (usage: Json | undefined) => ({
    promptTokens: usage?.promptTokens,
    cachedTokens: usage?.cachedTokens,
    completionTokens: usage?.completionTokens,
    requests: usage?.requests,
  });

  /** The run's usage as its durable event log holds it (a settled run's SSE answer ends at once). */
  async function loggedUsage(runId: string) {
    const res = await fetch(`${stack.orchestratorUrl}/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${stack.instanceToken}` },
      signal: AbortSignal.timeout(20_000),
    });
    const usage = (await res.text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as Json)
      .filter((e) => e.type === "usage");
    const sum = (field: string) => usage.reduce((n, e) => n + (e[field] as number), 0);
    return {
      promptTokens: sum("promptTokens"),
      cachedTokens: sum("cachedTokens"),
      completionTokens: sum("completionTokens"),
      requests: usage.length,
    };
  }

  async function runIds(): Promise<string[]> {
    const res = await http("/runs");
    return res.status === 200
      ? ((res.body as unknown as Array<{ runId: string }>) ?? []).map((r) => r.runId)
      : [];
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "jr2-usage-crash-"));
    stack = await startStack("process", {
      repoRoot,
      workflowsDir,
      orchestratorEnv: { JR2_DATA_DIR: dataDir },
      models: slowedModels,
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const trials: Array<{ workflow: Workflow; at: `${CrashPhase}:${number}`; twice?: true }> = [
    { workflow: "review", at: "ledgered:2" },
    { workflow: "review", at: "admit-sent:2", twice: true },
    { workflow: "review", at: "pick-delivered:2" },
    { workflow: "review", at: "gate-open:1" },
    { workflow: "triage", at: "timer-armed:1" },
  ];

  it(
    "reports the same totals as an uninterrupted run, to the token, after a kill at each phase",
    async () => {
      const baseline = new Map<Workflow, unknown>();
      baselineRequests.clear();
      for (const workflow of Object.keys(WORKFLOWS) as Workflow[]) {
        // Twice: the first warms model-sim's prefix cache, the second is what every later run sees.
        const seq = (await stack.requests()).length;
        const uninterrupted = await driveToEnd(workflow, (await startRun(workflow))!, seq);
        expect(uninterrupted.usage.requests).toBeGreaterThan(0);
        expect(jr2Totals(uninterrupted.usage)).toEqual(await providerTotals(seq));
        baseline.set(workflow, shape(uninterrupted));
        baselineRequests.set(workflow, uninterrupted.usage.requests as number);
      }
      for (const { workflow, at, twice } of trials) {
        const before = new Set(await runIds());
        const seq = (await stack.requests()).length;
        await stack.killOrchestrator();
        await stack.startOrchestrator({ JR2_CRASH_AT: at });
        void startRun(workflow); // the answer may never come: the process dies on the way
        const phase = at.split(":")[0]!;
        const logStart = stack.orchestratorLog().length;
        const deadline = Date.now() + 60_000;
        let killed = false;
        while (!killed && Date.now() < deadline) {
          killed = stack.orchestratorLog().slice(logStart).includes(`jr2 crash-point ${phase}`);
          const id = (await runIds()).find((r) => !before.has(r));
          const run = id ? await http(`/runs/${id}`) : undefined;
          if (run?.body && id) await answerGates(workflow, id, run.body, seq);
          await sleep(30);
        }
        expect(killed, `the Orchestrator reached ${at}`).toBe(true);
        await stack.killOrchestrator();
        await stack.startOrchestrator();
        const runId = (await runIds()).find((r) => !before.has(r));
        expect(runId, `the run killed at ${at} was saved`).toBeDefined();
        const final = await driveToEnd(workflow, runId!, seq);
        if (twice) expect({ at, status: final.status }).toEqual({ at, status: "done" });
        else expect({ at, ...shape(final) }).toEqual({ at, ...(baseline.get(workflow) as object) });
        expect({ at, ...jr2Totals(final.usage) }).toEqual({ at, ...(await providerTotals(seq)) });
        expect({ at, ...(await loggedUsage(runId!)) }).toEqual({ at, ...(await providerTotals(seq)) });
      }
    },
    15 * 60_000,
  );

  it(
    "logs one usage event per model request after a kill at a random moment while a request is in flight",
    async () => {
      const requests = baselineRequests.get("review") ?? 0;
      expect(requests, "the first test measured review's model requests").toBeGreaterThan(1);
      for (let trial = 0; trial < 2; trial++) {
        const seq = (await stack.requests()).length;
        const runId = await startRun("review");
        expect(runId).toBeDefined();
        // The k-th request of the run in flight, then a kill after a random part of its latency
        // (from 80 ms: the ledger commit that follows an admission is long done by then).
        const k = 1 + Math.floor(Math.random() * (requests - 1));
        const delay = 80 + Math.floor(Math.random() * (LATENCY_MS - 100));
        const at = `request ${k} of ${requests}, ${delay} ms in`;
        const deadline = Date.now() + 60_000;
        while ((await stack.requests()).length < seq + k) {
          if (Date.now() > deadline) throw new Error(`run ${runId} never sent request ${k}`);
          const run = await http(`/runs/${runId}`);
          if (run.body) await answerGates("review", runId!, run.body, seq);
          await sleep(10);
        }
        await sleep(delay);
        await stack.killOrchestrator();
        await stack.startOrchestrator();
        const final = await driveToEnd("review", runId!, seq);
        expect({ at, status: final.status }).toEqual({ at, status: "done" });
        const provider = await providerTotals(seq);
        expect({ at, ...(await loggedUsage(runId!)) }).toEqual({ at, ...provider });
        expect({ at, ...jr2Totals(final.usage) }).toEqual({ at, ...provider });
      }
    },
    5 * 60_000,
  );
});
