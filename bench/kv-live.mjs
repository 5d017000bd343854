// bench/kv's LIVE driver (issue 30 §4): N concurrent plain `review` runs (ADR-0228) through
// the real Orchestrator and Harness processes against model-sim with its time model on
// (`--time-scale`, `--cache-blocks`), scheduling on (kvTokens on both Agents' entries) or off.
// Figures come from model-sim's /_sim/stats (cached/prompt, prefill, preemptions) and the runs'
// recorded Turns (p95 Turn latency); simulated time is wall time divided by the time scale.
import { startStack } from "../packages/conformance/dist/index.js";
import { ROOT } from "./lib.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * One live measurement.
 * @param {{ n: number, blocks: number, scheduling: boolean, msPerSecond: number }} o
 */
export async function live({ n, blocks, scheduling, msPerSecond }) {
  const kv = scheduling ? { kvTokens: blocks * 16 } : {};
  const entry = (baseUrl, id) => ({ baseUrl, id, contextWindow: 32768, maxTokens: 1024, ...kv });
  const stack = await startStack("process", {
    repoRoot: ROOT,
    workflowsDir: `${ROOT}/packages/orchestrator/test/fixtures/plain-review`,
    models: (baseUrl) => ({
      coder: entry(baseUrl, "worker:1"),
      reviewer: entry(baseUrl, "script:request_changes,approve"),
    }),
    simArgs: ["--time-scale", String(msPerSecond), "--cache-blocks", String(blocks)],
    // FCFS as every peer: no per-endpoint cap below N's concurrency.
    // The idle rule's 30 s are simulated seconds here: 30 × the time scale in real ms.
    harnessEnv: {
      JR2_ENDPOINT_CONCURRENCY: "256",
      JR2_LOG_LEVEL: "warn",
      JR2_KV_IDLE_LEAVE_MS: String(30 * msPerSecond),
    },
  });
  const said = new Set();
  const http = async (path, init = {}) => {
    const res = await fetch(`${stack.orchestratorUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    // The Orchestrator sheds load on a lagging event loop (503 JR2_ERR_SERVICE_OVERLOADED, before
    // the route runs): on a loaded box that is an answer to wait out, not a run's status.
    if (res.status === 503 && text.includes("JR2_ERR_SERVICE_OVERLOADED")) {
      const retryAfter = Number(JSON.parse(text).retryAfter ?? 1);
      await sleep(Math.min(10, Math.max(1, retryAfter)) * 1000);
      return http(path, init);
    }
    try {
      return JSON.parse(text);
    } catch {
      // Not JSON: said once per status, read again by the caller's loop.
      if (!said.has(res.status))
        console.error(`${init.method ?? "GET"} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
      said.add(res.status);
      return null;
    }
  };
  try {
    const started = Date.now();
    const runIds = [];
    for (let i = 0; i < n; i++) {
      const body = await http("/workflows/review/runs", {
        method: "POST",
        body: JSON.stringify({ input: { task: `a hello${i}() function in hello${i}.js` } }),
      });
      runIds.push(body.runId);
    }
    const open = new Set(runIds);
    const deadline = Date.now() + 20 * 60_000;
    while (open.size > 0) {
      for (const runId of [...open]) {
        const run = await http(`/runs/${runId}`);
        if (typeof run?.status !== "string") {
          // An answer not about the run (said once above, or a JSON error): read again.
          if (run && !said.has(JSON.stringify(run)))
            console.error(`GET /runs/${runId} answered ${JSON.stringify(run).slice(0, 300)}`);
          if (run) said.add(JSON.stringify(run));
          continue;
        }
        if (run.status !== "running") {
          if (run?.status !== "done") throw new Error(`run ${runId} ended ${run?.status}`);
          open.delete(runId);
          continue;
        }
        for (const gate of run.gates ?? [])
          if (gate.acceptsNow.includes("merge"))
            await http(`/runs/${runId}/gates/${gate.id}/events`, {
              method: "POST",
              body: JSON.stringify({ type: "merge" }),
            });
      }
      if (Date.now() > deadline) throw new Error(`${open.size} runs did not end in 20 min`);
      await sleep(100);
    }
    const wallMs = Date.now() - started;
    const stats = await (await fetch(`${stack.simUrl}/_sim/stats`)).json();
    const turnSeconds = [];
    for (const runId of runIds)
      for (const t of (await http(`/runs/${runId}/turns`))?.turns ?? [])
        if (t.endedAt) turnSeconds.push((Date.parse(t.endedAt) - Date.parse(t.startedAt)) / msPerSecond);
    turnSeconds.sort((a, b) => a - b);
    const simulatedS = wallMs / msPerSecond;
    return {
      cachedRatio: stats.cachedRatio,
      promptTokens: stats.promptTokens,
      prefillTokens: stats.kv.prefillTokens,
      preemptions: stats.kv.preemptions,
      simulatedS,
      runsPerHour: (n / simulatedS) * 3600,
      p95TurnS: turnSeconds[Math.min(turnSeconds.length - 1, Math.floor(0.95 * turnSeconds.length))] ?? 0,
    };
  } finally {
    await stack.close();
  }
}
