import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("../../", import.meta.url));
const repoDir = fileURLToPath(new URL("../../../../", import.meta.url));
const bin = `${packageDir}dist/cli/main.js`;
// The plain review loop (ADR-0228): a Turn played by hand needs no Harness to attach a Repo Slot.
const workflowsDir = fileURLToPath(new URL("../fixtures/plain-review/", import.meta.url));
const TOKEN = "integration-token-5f0c2a9e7d41b3";

/** Starts `jr2 serve --harness none --port 0` and resolves with its URL from the ready line. */
function serve(env: NodeJS.ProcessEnv, args: string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [bin, "serve", "--harness", "none", "--port", "0", ...args], {
    cwd: repoDir,
    env: { ...process.env, JR2_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /jr2 orchestrator listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve({ child, url: match[1] });
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("exit", (code) => reject(new Error(`jr2 serve exited ${code}: ${out}`)));
  });
}

describe("jr2 serve --harness none (the built binary)", () => {
  let server: { child: ChildProcess; url: string };

  beforeAll(async () => {
    if (!existsSync(bin))
      execFileSync("pnpm", ["exec", "tsc", "-b", "packages/orchestrator"], { cwd: repoDir });
    server = await serve({ JR2_INSTANCE_TOKEN: TOKEN, JR2_WORKFLOWS_DIR: workflowsDir });
  });
  afterAll(() => {
    server?.child.kill("SIGTERM");
  });

  it("answers /healthz, serves the example workflows, and refuses a missing token with a coded 401", async () => {
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true });

    const workflows = (await (await fetch(`${server.url}/workflows`)).json()) as Array<{ name: string }>;
    expect(workflows.map((w) => w.name)).toContain("review");

    const runs = await fetch(`${server.url}/runs`);
    expect(runs.status).toBe(401);
    expect(await runs.json()).toMatchObject({ code: "JR2_ERR_AUTH_MISSING" });
  });

  it("plays a Turn by hand: start a run, read the surface, pick", async () => {
    const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const started = await fetch(`${server.url}/workflows/review/runs`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ input: { task: "the parser" } }),
    });
    expect(started.status).toBe(201);
    const { runId } = (await started.json()) as { runId: string };
    const run = (await (await fetch(`${server.url}/runs/${runId}`, { headers: auth })).json()) as {
      turns: Array<{ iid: string; agent: string }>;
    };
    const turn = run.turns.find((t) => t.agent === "coder");
    expect(turn).toBeDefined();
    const iid = encodeURIComponent(turn!.iid);
    const surface = (await (
      await fetch(`${server.url}/agents/${iid}/surface`, { headers: auth })
    ).json()) as {
      allowed: string[];
    };
    expect(surface.allowed).toEqual(["finish"]);
    const answer = await fetch(`${server.url}/agents/${iid}/picks`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "finish", arguments: { summary: "done" }, toolCallId: "call-1" }),
    });
    expect(await answer.json()).toEqual({ delivered: true, moved: true, turnComplete: true, allowed: [] });
  });

  it("jr2 menu prints each Agent's Menu and each state's derived set of a workflow file", () => {
    const out = execFileSync(
      process.execPath,
      [bin, "menu", "packages/orchestrator/test/fixtures/plain-review/review.ts"],
      {
        cwd: repoDir,
      },
    ).toString();
    expect(out).toContain("Agent coder");
    expect(out).toContain("Menu: dispute, finish");
    expect(out).toMatch(/fix: dispute, finish/);
    expect(out).toContain("Menu: approve, request_changes");
  });

  it("refuses to start with a well-known instance token, naming the setting", async () => {
    await expect(serve({ JR2_INSTANCE_TOKEN: "changeme" })).rejects.toThrow(
      /JR2_ERR_CONFIG_INVALID.*JR2_INSTANCE_TOKEN/,
    );
  });
});
