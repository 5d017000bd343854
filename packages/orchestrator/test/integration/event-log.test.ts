/**
 * Issue 11 item 1 on the real stack (ADR-0256): a `review` run's event log survives restarts.
 * The run goes to its end (its Gate answered by "the CLI"), the Orchestrator is killed and
 * started again — twice — and `GET /runs/:id/events` returns every event of the first life with
 * its original `seq` and `at`, then what the log grew by: pick arguments, the Gate's answerer,
 * when it opened. `jr2 follow <run> | head -1` prints one line and exits quietly (EPIPE).
 * Needs the built binaries (`pnpm build`).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunFeedEvent } from "@jr2/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, startStack } from "../../../conformance/src/index.js";
import { reviewModels } from "./example-models.js";
import { orchestratorHttp } from "./stack-http.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../fixtures/plain-review/", import.meta.url));
const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(missing.length > 0)("the durable event log (issue 11 item 1)", () => {
  let stack: Stack;
  let dataDir: string;

  const { http, events } = orchestratorHttp(() => stack);

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "jr2-event-log-"));
    stack = await startStack("process", {
      repoRoot,
      workflowsDir,
      orchestratorEnv: { JR2_DATA_DIR: dataDir },
      models: reviewModels,
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("serves every event of the first life with its original seq and at after restarts, and `jr2 follow | head -1` exits quietly", async () => {
    const started = await http("/workflows/review/runs", {
      method: "POST",
      body: JSON.stringify({ input: { task: "a hello() function in hello.js" } }),
    });
    expect(started.status).toBe(201);
    const runId = started.body!.runId as string;
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { body } = await http(`/runs/${runId}`);
      if (body?.status !== "running") break;
      for (const gate of (body.gates as Array<{ id: string; acceptsNow: string[] }>) ?? [])
        if (gate.acceptsNow.includes("merge"))
          await http(`/runs/${runId}/gates/${gate.id}/events`, {
            method: "POST",
            body: JSON.stringify({ type: "merge" }),
            client: "cli",
          });
      if (Date.now() > deadline) throw new Error(`run ${runId} did not end: ${JSON.stringify(body)}`);
      await sleep(50);
    }
    // The last Turn's usage follows the pick that ended the run: wait until the log is still.
    let firstLife: RunFeedEvent[] = [];
    for (let stable = 0; stable < 8; ) {
      const now = await events(runId);
      stable = now.length === firstLife.length ? stable + 1 : 0;
      firstLife = now;
      await sleep(150);
    }
    expect(firstLife.map((e) => e.seq)).toEqual(firstLife.map((_, i) => i));
    expect(firstLife.at(-1)).toMatchObject({ type: "status", status: "done" });
    const types = new Set(firstLife.map((e) => e.type));
    for (const t of ["status", "admission", "pick", "usage", "gate", "gate-answered"])
      expect(types).toContain(t);
    expect(firstLife.find((e) => e.type === "pick")).toHaveProperty("arguments");
    expect(firstLife.find((e) => e.type === "gate-answered")).toMatchObject({ event: "merge", by: "cli" });
    expect(firstLife.find((e) => e.type === "gate")).toHaveProperty("since");

    for (let life = 2; life <= 3; life++) {
      await stack.killOrchestrator();
      await stack.startOrchestrator();
      const served = await events(runId);
      expect(served, `life ${life}: the whole log, as the first life served it`).toEqual(firstLife);
      expect(await events(runId, 5)).toEqual(firstLife.slice(5));
    }

    // `jr2 follow <old run> | head -1`: the original time, then a quiet exit when the pipe closes.
    // `pipefail`: the pipeline's status is jr2's, not head's.
    const follow = spawn(
      "bash",
      ["-c", `set -o pipefail; node ${JSON.stringify(cli)} follow ${runId} | head -1`],
      {
        env: { ...process.env, JR2_URL: stack.orchestratorUrl, JR2_INSTANCE_TOKEN: stack.instanceToken },
      },
    );
    let stdout = "";
    let stderr = "";
    follow.stdout.on("data", (c) => (stdout += c));
    follow.stderr.on("data", (c) => (stderr += c));
    const code = await new Promise<number | null>((resolve) => follow.on("close", resolve));
    expect(stderr).not.toMatch(/EPIPE|Error/);
    expect(code).toBe(0);
    expect(stdout.trim().split("\n")).toHaveLength(1);
    expect(stdout).toContain(firstLife[0]!.at.slice(11, 19));
  }, 240_000);
});
