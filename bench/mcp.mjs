// bench/mcp (issue 29): one 24-Turn continued conversation (every Turn a Submission on the same
// conversation, as `continue: true` makes it) of an Agent with three MCP servers, on model-sim:
//   - `everything`: the npm package @modelcontextprotocol/server-everything over stdio (its
//     list_changed fires as it registers its client-dependent tools after initialize; the bench
//     counts the Harness's log lines saying one reached it);
//   - `docs`, `tracker`: our own Streamable HTTP servers (bench/mcp-servers.mjs) that answer every
//     tools/list in a new order and drop every session and socket every BENCH_MCP_DROP_MS (30 s).
// Side by side, the same conversation through the OpenAI Agents SDK (`@openai/agents`, its
// defaults: cacheToolsList false) against the same servers and a fresh model-sim. Measured from
// model-sim's own request log and the usage it reported: distinct tools blocks, the share of
// requests carrying the first request's tools bytes, and cached/prompt against the append-only
// ideal (request i can at best reuse request i-1's whole prompt, in 16-token blocks).
import { createServer } from "node:http";
import { join } from "node:path";
import { printTable, ROOT, startProcess, writeResults } from "./lib.mjs";
import { DOCS_TOOLS, startReorderingServer, TRACKER_TOOLS } from "./mcp-servers.mjs";

const TURNS = Number(process.env.BENCH_TURNS ?? 24);
const PROMPT_CHARS = Number(process.env.BENCH_PROMPT_CHARS ?? 2400);
const DROP_MS = Number(process.env.BENCH_MCP_DROP_MS ?? 30_000);
const GAP_MS = Number(process.env.BENCH_MCP_TURN_GAP_MS ?? 2_500);
const HARNESS_TOKEN = "bench-harness-token";
const EVERYTHING = join(
  ROOT,
  "packages/harness/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
const INSTRUCTIONS = "You are the worker of a review workflow. Use the docs and tracker tools when useful.";
const BLOCK = 16;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const MENU = [
  {
    name: "finish",
    description: "Finish this Turn's work.",
    parameters: {
      type: "object",
      properties: { summary: { type: "string", minLength: 1 } },
      required: ["summary"],
    },
  },
];

/** One state, `finish` allowed; every pick ends the Turn. */
function startFakeOrchestrator() {
  let turn = 0;
  const server = createServer((req, res) => {
    const m = /^\/agents\/([^/]+)\/(surface|picks)$/.exec(req.url ?? "");
    const send = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (!m) return send(404, { error: "not found", code: "JR2_ERR_NOT_FOUND" });
    if (m[2] === "surface")
      return send(200, {
        iid: decodeURIComponent(m[1]),
        runId: "bench",
        agent: "worker",
        turnId: `t${turn}`,
        menu: MENU,
        allowed: ["finish"],
      });
    req.resume();
    req.on("end", () => {
      turn++;
      send(200, { delivered: true, moved: true, turnComplete: true, allowed: [] });
    });
  });
  return new Promise((ok) =>
    server.listen(0, "127.0.0.1", () =>
      ok({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () => new Promise((r) => server.close(r)),
      }),
    ),
  );
}

function taskPrompt(turn) {
  const lines = [`Turn ${turn}. Review the following change log.`];
  for (let i = 1; lines.join("\n").length < PROMPT_CHARS; i++)
    lines.push(
      `- packages/m${(turn * 7 + i) % 31}/src/f${i}.ts: line ${turn * 100 + i} renames v${i} to item${turn}_${i}.`,
    );
  return lines.join("\n");
}

async function json(url, init) {
  const r = await fetch(url, init);
  if (r.status === 204) return undefined;
  const body = await r.json();
  if (!r.ok) throw new Error(`${url} → ${r.status} ${JSON.stringify(body)}`);
  return body;
}

async function jr2Turn(harnessUrl, iid, prompt, mcp) {
  const enc = encodeURIComponent(iid);
  const auth = { authorization: `Bearer ${HARNESS_TOKEN}` };
  const admission = await json(`${harnessUrl}/conversations/${enc}/submissions`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({
      agent: "worker",
      kind: "task",
      definition: { model: "obedient", instructions: INSTRUCTIONS, workspace: "none", mcp },
      prompt,
    }),
  });
  let offset = admission.offset;
  for (;;) {
    const page = await json(`${harnessUrl}/conversations/${enc}/stream?offset=${offset}&wait=5`, {
      headers: auth,
    });
    if (!page) continue;
    offset = page.nextOffset;
    const settled = page.events.find(
      (e) => e.type === "submission-settled" && e.submissionId === admission.submissionId,
    );
    if (settled) {
      if (settled.outcome !== "completed")
        throw new Error(`jr2 Turn settled ${settled.outcome}: ${JSON.stringify(settled.error)}`);
      return;
    }
  }
}

/** The measures of one side from model-sim's request log and stats. */
async function measure(simUrl) {
  const recorded = await json(`${simUrl}/_sim/requests`);
  const bodies = recorded.map((r) => JSON.parse(r.raw));
  const tools = bodies.map((b) => JSON.stringify(b.tools ?? null));
  const usage = recorded.map((r) => r.usage ?? r.response?.usage ?? null);
  let cached = 0;
  let ideal = 0;
  let prompt = 0;
  for (let i = 1; i < usage.length; i++) {
    const u = usage[i];
    const prev = usage[i - 1];
    if (!u || !prev) continue;
    prompt += u.prompt_tokens;
    cached += u.prompt_tokens_details?.cached_tokens ?? 0;
    ideal += Math.min(u.prompt_tokens, Math.floor(prev.prompt_tokens / BLOCK) * BLOCK);
  }
  return {
    requests: bodies.length,
    distinctToolsBlocks: new Set(tools).size,
    sameToolsAsFirst: tools.filter((t) => t === tools[0]).length / Math.max(1, tools.length),
    promptTokensFrom2nd: prompt,
    cachedTokensFrom2nd: cached,
    idealCachedFrom2nd: ideal,
    cachedOfIdeal: ideal ? cached / ideal : 0,
  };
}

async function main() {
  const started = [];
  const own = [
    await startReorderingServer("docs", DOCS_TOOLS),
    await startReorderingServer("tracker", TRACKER_TOOLS),
  ];
  started.push(...own.map((s) => ({ stop: s.close })));
  const dropper = setInterval(() => {
    for (const s of own) s.drop();
  }, DROP_MS);
  try {
    // jr2: the real Harness (built dist) and its own model-sim.
    const orch = await startFakeOrchestrator();
    started.push({ stop: orch.close });
    const sim = await startProcess("model-sim(jr2)", ["packages/model-sim/dist/main.js", "--port", "0"]);
    started.push(sim);
    const models = {
      obedient: { baseUrl: `${sim.url}/v1`, id: "obedient", contextWindow: 131072, maxTokens: 1024 },
    };
    const harness = await startProcess("harness", ["packages/harness/dist/main.js"], {
      JR2_HARNESS_TOKEN: HARNESS_TOKEN,
      JR2_HARNESS_PORT: "0",
      JR2_ORCHESTRATOR_URL: orch.url,
      JR2_MODELS: JSON.stringify(models),
      JR2_LOG_LEVEL: "info",
    });
    started.push(harness);
    const mcp = {
      docs: { url: own[0].url },
      everything: { command: process.execPath, args: [EVERYTHING, "stdio"] },
      tracker: { url: own[1].url },
    };
    const t0 = Date.now();
    for (let turn = 1; turn <= TURNS; turn++) {
      await jr2Turn(harness.url, "bench/mcp/worker", taskPrompt(turn), mcp);
      if (turn < TURNS) await sleep(GAP_MS);
    }
    const jr2 = { ...(await measure(sim.url)), seconds: (Date.now() - t0) / 1000 };
    jr2.listChangedSeen = (harness.output().match(/tools\/list_changed/g) ?? []).length;

    // The OpenAI Agents SDK, defaults, the same servers, a fresh model-sim.
    const sim2 = await startProcess("model-sim(agents-sdk)", [
      "packages/model-sim/dist/main.js",
      "--port",
      "0",
    ]);
    started.push(sim2);
    const t1 = Date.now();
    const agentsSdk = { ...(await runAgentsSdk(`${sim2.url}/v1`, own)), ...(await measure(sim2.url)) };
    agentsSdk.seconds = (Date.now() - t1) / 1000;

    const drops = own.map((s) => s.stats());
    console.log(
      `\nbench/mcp — ${TURNS}-Turn continued conversation, 3 MCP servers, model-sim (a SIMULATOR)\n`,
    );
    printTable(
      [
        ["jr2 (tools frozen per conversation)", jr2],
        ["OpenAI Agents SDK (defaults)", agentsSdk],
      ].map(([side, m]) => ({
        side,
        requests: m.requests,
        "distinct tools blocks": m.distinctToolsBlocks,
        "requests with the 1st request's tools": `${(100 * m.sameToolsAsFirst).toFixed(1)} %`,
        "cached/prompt (2nd on)": `${m.cachedTokensFrom2nd}/${m.promptTokensFrom2nd}`,
        "cached of append-only ideal": `${(100 * m.cachedOfIdeal).toFixed(2)} %`,
      })),
    );
    console.log(
      `\nlist_changed reaching the jr2 Harness: ${jr2.listChangedSeen}; drops: ${drops.map((d) => d.drops).join(", ")}; tools/list answered: ${drops.map((d) => d.lists).join(", ")}`,
    );
    const failures = [];
    if (jr2.sameToolsAsFirst !== 1) failures.push("jr2: a request carried other tools bytes");
    if (jr2.cachedOfIdeal < 0.995)
      failures.push(`jr2: cached ${(100 * jr2.cachedOfIdeal).toFixed(2)} % of the ideal (< 99.5 %)`);
    if (jr2.listChangedSeen < 1) failures.push("jr2: no list_changed reached the Harness");
    writeResults("mcp", {
      setup: {
        turns: TURNS,
        promptChars: PROMPT_CHARS,
        dropMs: DROP_MS,
        turnGapMs: GAP_MS,
        blockSize: BLOCK,
        servers: Object.keys(mcp),
      },
      jr2,
      agentsSdk,
      ownServers: drops,
      failures,
    });
    if (failures.length) throw new Error(failures.join("; "));
  } finally {
    clearInterval(dropper);
    for (const s of started.reverse()) await s.stop();
  }
}

/** The same conversation through @openai/agents: MCP servers listed per run (its default). */
async function runAgentsSdk(baseUrl, own) {
  process.env.OPENAI_BASE_URL = baseUrl;
  process.env.OPENAI_API_KEY = "model-sim";
  const { Agent, MCPServerStdio, MCPServerStreamableHttp, run, setOpenAIAPI, setTracingDisabled, tool } =
    await import("@openai/agents");
  setOpenAIAPI("chat_completions");
  setTracingDisabled(true);
  const servers = [
    new MCPServerStreamableHttp({ url: own[0].url, name: "docs" }),
    new MCPServerStdio({ command: process.execPath, args: [EVERYTHING, "stdio"], name: "everything" }),
    new MCPServerStreamableHttp({ url: own[1].url, name: "tracker" }),
  ];
  for (const s of servers) await s.connect();
  const finish = tool({
    name: "finish",
    description: "Finish this Turn's work.",
    parameters: {
      type: "object",
      properties: { summary: { type: "string", minLength: 1 } },
      required: ["summary"],
      additionalProperties: false,
    },
    strict: false,
    execute: async () => 'Delivered "finish". Your turn is over. Call no further tool.',
  });
  const agent = new Agent({
    name: "worker",
    instructions: INSTRUCTIONS,
    model: "obedient",
    tools: [finish],
    mcpServers: servers,
  });
  let history = [];
  let errors = 0;
  try {
    for (let turn = 1; turn <= TURNS; turn++) {
      const input = [...history, { role: "user", content: `${taskPrompt(turn)}\n\nAllowed now: finish.` }];
      try {
        const result = await run(agent, input);
        history = result.history;
      } catch (err) {
        // A dropped server fails the run (the SDK does not reconnect): counted, the Turn retried once.
        errors++;
        for (const s of servers) await s.close().catch(() => {});
        for (const s of servers) await s.connect().catch(() => {});
        const result = await run(agent, input).catch(() => undefined);
        if (result) history = result.history;
        else console.error(`agents-sdk Turn ${turn}: ${err instanceof Error ? err.message : err}`);
      }
      if (turn < TURNS) await sleep(GAP_MS);
    }
  } finally {
    for (const s of servers) await s.close().catch(() => {});
  }
  return { failedRuns: errors };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
