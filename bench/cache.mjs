// bench/cache (SPEC §12, §0): one continued conversation of ≥ 20 Turns across 3 states with
// different Allowed picks, through the REAL Harness (built dist) against model-sim (Qwen3
// template), twice side by side in one run:
//   fixed  — jr2's fixed Menu: the tools block is byte-identical on every request;
//   narrow — the benchmark-only JR2_BENCH_NARROW_TOOLS=1 Harness: only the Allowed picks as tools.
// Then the reasoning part (cache-reasoning.mjs): reasoning-heavy Turns under two templates.
// A tiny fake Orchestrator (surface + picks) walks the 3-state machine. Each mode has its own
// model-sim so neither warms the other's prefix cache. Prints per-request cached/prompt and totals.
import { createServer } from "node:http";
import { runReasoningBench } from "./cache-reasoning.mjs";
import { printTable, startProcess, writeResults } from "./lib.mjs";

const TURNS = Number(process.env.BENCH_TURNS ?? 24);
const PROMPT_CHARS = Number(process.env.BENCH_PROMPT_CHARS ?? 4800);
const HARNESS_TOKEN = "bench-harness-token";

/** The Menu (sorted by name, §3.3) and the three states' Allowed picks. */
const tool = (name, description, properties, required) => ({
  name,
  description,
  parameters: { type: "object", properties, required },
});
const MENU = [
  tool("approve", "Approve the change as it stands.", { summary: { type: "string", minLength: 1 } }, [
    "summary",
  ]),
  tool("dispute", "Dispute the review's findings.", { reason: { type: "string", minLength: 1 } }, ["reason"]),
  tool("finish", "Finish the implementation work.", { summary: { type: "string", minLength: 1 } }, [
    "summary",
  ]),
  tool(
    "request_changes",
    "Ask the author for changes.",
    { notes: { type: "array", items: { type: "string" }, minItems: 1 } },
    ["notes"],
  ),
];
const STATES = [
  { state: "implementing", allowed: ["finish"] },
  { state: "answering", allowed: ["dispute", "finish"] },
  { state: "reviewing", allowed: ["approve", "request_changes"] },
];

/** A fake Orchestrator: per iid, the live state index; a pick in Allowed moves to the next state. */
function startFakeOrchestrator() {
  const at = new Map(); // iid → { turn, stateIndex }
  const answers = new Map(); // iid + toolCallId → stored answer (§4.3 check 0)
  const picks = [];
  const server = createServer((req, res) => {
    const m = /^\/agents\/([^/]+)\/(surface|picks)$/.exec(req.url ?? "");
    const send = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (!m) return send(404, { error: "not found", code: "JR2_ERR_NOT_FOUND" });
    const iid = decodeURIComponent(m[1]);
    const live = at.get(iid) ?? { turn: 0, stateIndex: 0 };
    at.set(iid, live);
    const allowed = STATES[live.stateIndex].allowed;
    if (m[2] === "surface") {
      return send(200, {
        iid,
        runId: "bench-run",
        agent: "worker",
        turnId: `t${live.turn}`,
        menu: MENU,
        allowed,
      });
    }
    let raw = "";
    req.on("data", (c) => {
      raw += c;
    });
    req.on("end", () => {
      const pick = JSON.parse(raw);
      const key = `${iid}\u0000${pick.toolCallId}`;
      if (answers.has(key)) return send(200, answers.get(key));
      picks.push({ iid, name: pick.name, state: STATES[live.stateIndex].state });
      let answer;
      if (allowed.includes(pick.name)) {
        live.stateIndex = (live.stateIndex + 1) % STATES.length;
        live.turn++;
        answer = { delivered: true, moved: true, turnComplete: true, allowed: [] };
      } else {
        answer = { delivered: false, moved: false, turnComplete: false, allowed };
      }
      answers.set(key, answer);
      send(200, answer);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        at,
        picks,
        close: () => new Promise((r) => server.close(r)),
      });
    });
  });
}

/** A long, Turn-specific task prompt (~PROMPT_CHARS characters) so the history passes 20k tokens. */
function taskPrompt(turn, state) {
  const lines = [`Turn ${turn} (${state}). Work through the following change log and act on it.`];
  let i = 0;
  while (lines.join("\n").length < PROMPT_CHARS) {
    i++;
    lines.push(
      `- packages/module-${(turn * 7 + i) % 31}/src/file-${i}.ts: line ${turn * 100 + i} renames ` +
        `\`value${i}\` to \`item${turn}_${i}\`, adds a guard for empty input and updates ${i % 5} callers.`,
    );
  }
  return lines.join("\n");
}

async function json(url, init) {
  const r = await fetch(url, init);
  if (r.status === 204) return undefined;
  const body = await r.json();
  if (!r.ok) throw new Error(`${init?.method ?? "GET"} ${url} → ${r.status} ${JSON.stringify(body)}`);
  return body;
}

/** Submits one Turn to a Harness and follows its stream to the settlement. */
async function runSubmission(harnessUrl, iid, prompt) {
  const enc = encodeURIComponent(iid);
  const auth = { authorization: `Bearer ${HARNESS_TOKEN}` };
  const admission = await json(`${harnessUrl}/conversations/${enc}/submissions`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({
      agent: "worker",
      kind: "task",
      definition: {
        model: "obedient",
        instructions: "You are the worker of a three-state review workflow.",
        workspace: "none",
      },
      prompt,
    }),
  });
  let offset = admission.offset;
  const usage = [];
  const picks = [];
  for (;;) {
    const page = await json(`${harnessUrl}/conversations/${enc}/stream?offset=${offset}&wait=5`, {
      headers: auth,
    });
    if (!page) continue;
    offset = page.nextOffset;
    for (const e of page.events) {
      if (e.submissionId !== admission.submissionId) continue;
      if (e.type === "usage") usage.push(e);
      if (e.type === "pick") picks.push(e.name);
      if (e.type === "submission-settled") return { usage, picks, outcome: e.outcome, error: e.error };
    }
  }
}

async function main() {
  const MODES = ["fixed", "narrow"];
  const started = [];
  try {
    const orch = await startFakeOrchestrator();
    started.push({ stop: orch.close });
    const sims = {};
    const harnesses = {};
    for (const mode of MODES) {
      sims[mode] = await startProcess(`model-sim(${mode})`, [
        "packages/model-sim/dist/main.js",
        "--port",
        "0",
      ]);
      started.push(sims[mode]);
      const models = {
        obedient: { baseUrl: `${sims[mode].url}/v1`, id: "obedient", contextWindow: 131072, maxTokens: 1024 },
      };
      harnesses[mode] = await startProcess(`harness(${mode})`, ["packages/harness/dist/main.js"], {
        JR2_HARNESS_TOKEN: HARNESS_TOKEN,
        JR2_HARNESS_PORT: "0",
        JR2_ORCHESTRATOR_URL: orch.url,
        JR2_MODELS: JSON.stringify(models),
        JR2_LOG_LEVEL: "warn",
        ...(mode === "narrow" ? { JR2_BENCH_NARROW_TOOLS: "1" } : { JR2_BENCH_NARROW_TOOLS: "" }),
      });
      started.push(harnesses[mode]);
    }
    const warned = /BENCHMARK-ONLY/.test(harnesses.narrow.output());
    if (!warned) throw new Error("the narrowed Harness did not print its benchmark-only warning");
    if (/BENCHMARK-ONLY/.test(harnesses.fixed.output()))
      throw new Error("the fixed-Menu Harness is in narrowed mode");

    const rows = [];
    const perRequest = { fixed: [], narrow: [] };
    for (let turn = 1; turn <= TURNS; turn++) {
      const row = { turn };
      for (const mode of MODES) {
        const iid = `bench-run/cache/${mode}/worker`;
        const live = orch.at.get(iid) ?? { stateIndex: 0 };
        const { state, allowed } = STATES[live.stateIndex];
        row.state = state;
        row.allowed = allowed.join(",");
        const r = await runSubmission(harnesses[mode].url, iid, taskPrompt(turn, state));
        if (r.outcome !== "completed")
          throw new Error(`${mode} Turn ${turn} settled ${r.outcome}: ${JSON.stringify(r.error)}`);
        for (const u of r.usage) {
          perRequest[mode].push({
            turn,
            state,
            allowed,
            picks: r.picks,
            promptTokens: u.promptTokens,
            cachedTokens: u.cachedTokens,
            ratio: u.promptTokens ? u.cachedTokens / u.promptTokens : 0,
          });
        }
        const last = r.usage.at(-1);
        row[`${mode} req`] = r.usage.length;
        row[`${mode} pick`] = r.picks.join(",");
        row[`${mode} cached/prompt`] = last ? `${last.cachedTokens}/${last.promptTokens}` : "-";
        row[`${mode} %`] = last ? ((100 * last.cachedTokens) / last.promptTokens).toFixed(1) : "-";
      }
      rows.push(row);
    }

    // Cross-check against what model-sim itself recorded, and count distinct tools blocks.
    const totals = {};
    for (const mode of MODES) {
      const stats = await json(`${sims[mode].url}/_sim/stats`);
      const recorded = await json(`${sims[mode].url}/_sim/requests`);
      const toolsBlocks = new Set(recorded.map((r) => JSON.stringify(JSON.parse(r.raw).tools ?? null)));
      const reqs = perRequest[mode];
      const prompt = reqs.reduce((s, r) => s + r.promptTokens, 0);
      const cached = reqs.reduce((s, r) => s + r.cachedTokens, 0);
      totals[mode] = {
        requests: reqs.length,
        promptTokens: prompt,
        cachedTokens: cached,
        cachedRatio: prompt ? cached / prompt : 0,
        uncachedTokens: prompt - cached,
        lastPromptTokens: reqs.at(-1)?.promptTokens ?? 0,
        distinctToolsBlocks: toolsBlocks.size,
        simStats: stats,
      };
    }

    console.log(
      `\nbench/cache — ${TURNS} Turns, 3 states, Qwen3 template via model-sim (a SIMULATOR), real Harness\n`,
    );
    printTable(rows);
    console.log("");
    printTable(
      MODES.map((mode) => ({
        mode: mode === "fixed" ? "fixed Menu (jr2)" : "narrowed per Turn",
        requests: totals[mode].requests,
        "prompt tokens": totals[mode].promptTokens,
        "cached tokens": totals[mode].cachedTokens,
        "cached %": (100 * totals[mode].cachedRatio).toFixed(1),
        "re-billed tokens": totals[mode].uncachedTokens,
        "final history": totals[mode].lastPromptTokens,
        "distinct tools blocks": totals[mode].distinctToolsBlocks,
      })),
    );
    const reasoning = await runReasoningBench();
    writeResults("cache", {
      setup: {
        turns: TURNS,
        promptChars: PROMPT_CHARS,
        template: "qwen3",
        blockSize: 16,
        states: STATES,
        menu: MENU.map((t) => t.name),
        harness: "packages/harness/dist/main.js (fixed: default; narrow: JR2_BENCH_NARROW_TOOLS=1)",
        modelSim: "packages/model-sim/dist/main.js, one per mode (separate prefix caches), model `obedient`",
        orchestrator: "bench/cache.mjs fake Orchestrator (surface + picks, 3-state cycle)",
      },
      totals,
      perRequest,
      reasoning,
    });
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
