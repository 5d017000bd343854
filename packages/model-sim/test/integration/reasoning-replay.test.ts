/**
 * ADR-0310 on the wire: the built Harness against model-sim, which thinks as a Qwen server does.
 * By default no earlier reasoning is replayed (Qwen3 would drop it at the next user message and
 * re-prefill from there); an entry with `reasoningReplay: "echo"` replays it with
 * `preserve_thinking` (Qwen3.6-style). Either way each request extends the previous one and its
 * whole prompt is a cache hit.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { fileURLToPath } from "node:url";
import { type RunningModelSim, startModelSim } from "@jr2/model-sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const harnessBin = fileURLToPath(new URL("../../../harness/dist/main.js", import.meta.url));
const TOKEN = "reasoning-replay-test-token";
const MENU = ["approve", "finish"].map((name) => ({
  name,
  description: `${name}.`,
  parameters: {
    type: "object",
    properties: { summary: { type: "string", minLength: 1 } },
    required: ["summary"],
  },
}));

let sim: RunningModelSim;
let orchestrator: Server;
let harness: ChildProcess;
let harnessUrl = "";

/** A fake Orchestrator: `finish` is allowed; the first pick keeps the Turn open, the second ends it. */
function fakeOrchestrator(): Promise<string> {
  const picks = new Map<string, number>();
  orchestrator = createServer((req, res) => {
    const m = /^\/agents\/([^/]+)\/(surface|picks)$/.exec(req.url ?? "");
    const send = (body: unknown) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (!m) {
      res.writeHead(404).end();
      return;
    }
    const iid = decodeURIComponent(m[1]!);
    if (m[2] === "surface")
      return send({ iid, runId: "r", agent: "worker", turnId: "t1", menu: MENU, allowed: ["finish"] });
    req.resume();
    req.on("end", () => {
      const n = (picks.get(iid) ?? 0) + 1;
      picks.set(iid, n);
      send({ delivered: true, moved: true, turnComplete: n >= 2, allowed: n >= 2 ? [] : ["finish"] });
    });
  });
  return new Promise((resolve) =>
    orchestrator.listen(0, "127.0.0.1", () =>
      resolve(`http://127.0.0.1:${(orchestrator.address() as { port: number }).port}`),
    ),
  );
}

async function submit(iid: string, model: string): Promise<void> {
  const url = `${harnessUrl}/conversations/${encodeURIComponent(iid)}`;
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const admitted = (await (
    await fetch(`${url}/submissions`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        agent: "worker",
        kind: "task",
        definition: { model, instructions: "You finish work.", workspace: "none", thinkingLevel: "medium" },
        prompt: "Finish the change.",
      }),
    })
  ).json()) as { offset: string; submissionId: string };
  let offset = admitted.offset;
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${url}/stream?offset=${offset}&wait=5`, { headers });
    if (res.status === 204) continue; // nothing new within the wait
    const page = (await res.json()) as {
      events: Array<{ type: string; submissionId?: string; outcome?: string }>;
      nextOffset: string;
    };
    offset = page.nextOffset;
    const settled = page.events.find(
      (e) => e.type === "submission-settled" && e.submissionId === admitted.submissionId,
    );
    if (settled) {
      expect(settled.outcome).toBe("completed");
      return;
    }
  }
  throw new Error("the Submission never settled");
}

function requestsOf(model: string) {
  return sim
    .requests()
    .filter((r) => r.model === model)
    .map((r) => ({ body: JSON.parse(r.raw) as Record<string, any>, raw: r.raw, usage: r.usage! }));
}

describe.skipIf(!existsSync(harnessBin))("reasoning replay through the built Harness (ADR-0310)", () => {
  beforeAll(async () => {
    sim = await startModelSim();
    const orchestratorUrl = await fakeOrchestrator();
    const qwenStyle = {
      reasoning: true,
      compat: { thinkingFormat: "qwen-chat-template" },
      contextWindow: 131072,
      maxTokens: 4096,
    };
    const models = {
      qwen3: { ...qwenStyle, baseUrl: sim.baseUrl, id: "obedient+think:300@qwen3" },
      qwen36: {
        ...qwenStyle,
        baseUrl: sim.baseUrl,
        id: "obedient+think:300@qwen3.6",
        reasoningReplay: "echo",
      },
    };
    harness = spawn(process.execPath, [harnessBin], {
      env: {
        ...process.env,
        JR2_HARNESS_TOKEN: TOKEN,
        JR2_HARNESS_PORT: "0",
        JR2_ORCHESTRATOR_URL: orchestratorUrl,
        JR2_MODELS: JSON.stringify(models),
        JR2_LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    harnessUrl = await new Promise<string>((resolve, reject) => {
      let out = "";
      const onData = (c: Buffer) => {
        out += c;
        const m = /listening on (http:\/\/[^\s]+)/.exec(out);
        if (m) resolve(m[1]!);
      };
      harness.stdout!.on("data", onData);
      harness.stderr!.on("data", onData);
      harness.once("exit", (code) => reject(new Error(`the Harness exited (${code}): ${out}`)));
    });
  });

  afterAll(async () => {
    harness?.kill("SIGTERM");
    await new Promise((r) => orchestrator?.close(r));
    await sim?.close();
  });

  const cachedWholePrevious = (reqs: ReturnType<typeof requestsOf>) => {
    for (let i = 1; i < reqs.length; i++) {
      const ideal = Math.floor(reqs[i - 1]!.usage.prompt_tokens / 16) * 16;
      expect(reqs[i]!.usage.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(ideal - 16);
      const a = JSON.stringify(reqs[i - 1]!.body.messages);
      expect(JSON.stringify(reqs[i]!.body.messages).startsWith(a.slice(0, -1))).toBe(true);
    }
  };

  it("by default replays no reasoning although the model thought, and hits the whole earlier prompt", async () => {
    await submit("r/worker/qwen3", "qwen3");
    const reqs = requestsOf("obedient+think:300@qwen3");
    expect(reqs).toHaveLength(2);
    expect(reqs[0]!.usage.completion_tokens).toBeGreaterThan(300); // it thought
    const answers = reqs[1]!.body.messages.filter((m: { role: string }) => m.role === "assistant");
    expect(answers).toHaveLength(1);
    for (const field of ["reasoning", "reasoning_content", "reasoning_text"])
      expect(answers[0]).not.toHaveProperty(field);
    expect(reqs[1]!.body.chat_template_kwargs).toEqual({ enable_thinking: true, preserve_thinking: true });
    cachedWholePrevious(reqs);
  });

  it("an echo entry replays each answer's reasoning with preserve_thinking, still a byte extension and a full hit", async () => {
    await submit("r/worker/qwen36", "qwen36");
    const reqs = requestsOf("obedient+think:300@qwen3.6");
    expect(reqs).toHaveLength(2);
    const answer = reqs[1]!.body.messages.find((m: { role: string }) => m.role === "assistant");
    expect(answer.reasoning_content).toContain('The newest "Allowed now" line decides: I call finish.');
    expect(answer.reasoning).toBe(answer.reasoning_content);
    expect(reqs[1]!.body.chat_template_kwargs.preserve_thinking).toBe(true);
    cachedWholePrevious(reqs);
  });
});
