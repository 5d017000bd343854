/**
 * Issue 10 §5 "Model names", against the built binaries: `jr2 serve` with a workflow whose
 * Agents use `planner` and `writer` (and a static Turn input naming `editor`), against a real
 * `jr2-harness` whose table has only `coder`, logs one `warn` per missing name — before it is
 * ready, so before any Turn; against an older Harness without `GET /models` it logs one `info`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const repoDir = fileURLToPath(new URL("../../../../", import.meta.url));
const cli = `${repoDir}packages/orchestrator/dist/cli/main.js`;
const harnessMain = `${repoDir}packages/harness/dist/main.js`;
const workflowsDir = fileURLToPath(new URL("./model-check-workflows", import.meta.url));
const INSTANCE = "model-check-instance-0123456789abcdef";
const HARNESS = "model-check-harness-0123456789abcdef";
const KEY = "model-check-sandbox-key-0123456789abcdef";
const SANDBOX = `instance.${createHmac("sha256", KEY).update("instance").digest("hex")}`;

const children: ChildProcess[] = [];
let fake: Server | undefined;
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGTERM");
  fake?.close();
  fake = undefined;
});

/** Spawns `args` and resolves with its output once `ready` matches it (the output so far). */
function start(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ out: () => string; match: string }> {
  const child = spawn(process.execPath, args, {
    cwd: repoDir,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  return new Promise((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      out += chunk.toString();
      const m = ready.exec(out);
      if (m) resolve({ out: () => out, match: m[1] ?? "" });
    };
    child.stdout?.on("data", seen);
    child.stderr?.on("data", seen);
    child.on("exit", (code) => reject(new Error(`${args[0]} exited ${code}: ${out}`)));
  });
}

/** `jr2 serve` against `harnessUrl`; resolves once it logged "ready", with its log lines (JSON) so far. */
async function serve(harnessUrl: string) {
  const served = await start(
    [cli, "serve", "--harness", harnessUrl, "--port", "0", "--workflows", workflowsDir],
    {
      JR2_INSTANCE_TOKEN: INSTANCE,
      JR2_HARNESS_TOKEN: HARNESS,
      JR2_SANDBOX_KEY: KEY,
      JR2_LOG_LEVEL: "info",
      JR2_DATA_DIR: "",
    },
    // The log's "ready" line, not the console's: pino writes asynchronously.
    /"msg":"(ready)"/,
  );
  const lines = served
    .out()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { level: number; msg: string; model?: string; uses?: unknown[] });
  return lines;
}

describe("the start-up model check (issue 10 §5)", () => {
  it("warns once per model name the Harness lacks, naming where it is used, before ready", async () => {
    const harness = await start(
      [harnessMain],
      {
        JR2_HARNESS_TOKEN: HARNESS,
        JR2_SANDBOX_TOKEN: SANDBOX,
        JR2_HARNESS_PORT: "0",
        JR2_ORCHESTRATOR_URL: "http://127.0.0.1:9",
        JR2_MODELS: JSON.stringify({
          coder: { baseUrl: "http://127.0.0.1:9/v1", id: "coder", contextWindow: 4096, maxTokens: 256 },
        }),
      },
      /jr2 harness listening on (http:\/\/\S+)/,
    );
    const lines = await serve(harness.match);
    const warns = lines.filter((l) => l.level === 40 && l.model !== undefined);
    expect(warns.map((w) => w.model).sort()).toEqual(["editor", "planner", "writer"]);
    const writer = warns.find((w) => w.model === "writer");
    expect(writer?.uses).toEqual([
      { model: "writer", workflow: "plan-write", agent: "writer", state: "writing", source: "agent" },
      { model: "writer", workflow: "plan-write", agent: "writer", state: "polish", source: "agent" },
    ]);
    expect(warns.find((w) => w.model === "editor")?.uses).toEqual([
      { model: "editor", workflow: "plan-write", agent: "writer", state: "polish", source: "turn-input" },
    ]);
    const planner = warns.find((w) => w.model === "planner");
    expect(planner?.msg).toContain("Agent `planner` in state `planning` of workflow `plan-write`");
    expect(planner?.msg).toContain("JR2_MODELS");
    // Before "ready": no run — so no Turn — can have started yet.
    const ready = lines.findIndex((l) => l.msg === "ready");
    expect(ready).toBeGreaterThan(-1);
    for (const w of warns) expect(lines.indexOf(w)).toBeLessThan(ready);
  });

  it("skips an older Harness without GET /models with one info line", async () => {
    fake = createServer((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "no route", code: "JR2_ERR_ROUTE_NOT_FOUND" }));
    });
    await new Promise<void>((resolve) => fake?.listen(0, "127.0.0.1", resolve));
    const address = fake.address();
    const lines = await serve(
      `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
    );
    expect(lines.filter((l) => l.level === 40 && l.model !== undefined)).toEqual([]);
    expect(lines.filter((l) => l.msg.includes("no GET /models"))).toHaveLength(1);
    expect(lines.find((l) => l.msg.includes("no GET /models"))?.level).toBe(30);
  });

  it("a Harness not listening yet does not stop `jr2 serve`: it becomes ready", async () => {
    // Regression (hostile pass): with the Harness not yet listening (compose or `pnpm start`
    // starting both at once), the first GET /models was refused at once and `jr2 serve` exited 1,
    // "stopped before finishing: nothing was left to run while it waited". Root cause: start-up
    // awaited the check racing an unref'd 2 s timer, and the check's backoff timer is unref'd
    // too, so before listen nothing held the event loop. Fixed in src/main.ts (a ref'd timer).
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const address = probe.address();
    const port = typeof address === "object" && address ? address.port : 0;
    await new Promise((resolve) => probe.close(resolve));
    const lines = await serve(`http://127.0.0.1:${port}`);
    expect(lines.some((l) => l.msg === "ready")).toBe(true);
  });
});
