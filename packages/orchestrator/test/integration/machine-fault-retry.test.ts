/**
 * Issue 22 §2 on the real stack (model-sim, the Harness, the Orchestrator binaries; ADR-0272): a
 * workflow whose Agent input mapper returns an unknown key (`system:`) loads (its input has no
 * default, so the load check cannot call the mapper) and its runs fault at the first Turn, in
 * their initial macrostep. `jr2 retry` refuses while the workflow file is unchanged, naming the
 * fix; once the file is fixed and the Orchestrator restarted, `jr2 retry` shows its plan (a dry
 * run), then with `--yes` starts the run again from its stored input under the same runId, and
 * `jr2 fork` of the other faulted run does the same in a new run: each ends `succeeded`, and no
 * run, log line or CLI output ever says `[object Object]`.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, startStack } from "../../../conformance/src/index.js";
import { orchestratorHttp } from "./stack-http.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `drafted`: one Turn whose mapper, when `bad`, returns the unknown Turn input key `system`. */
function drafted(bad: boolean): string {
  return `
import { z } from "zod";
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
const finish = defineEvent({ name: "finish", description: "Say the draft is done.", audience: "agent" });
export const machine = jr2Setup({
  events: [finish],
  actors: { writer: agent({ model: "writer", instructions: "You draft." }) },
  input: z.object({ topic: z.string() }),
}).createMachine({
  id: "drafted",
  context: ({ input }) => ({ topic: input.topic }),
  initial: "drafting",
  states: {
    drafting: {
      invoke: {
        src: "writer",
        input: ({ context }) => ({ prompt: \`Draft about \${context.topic}.\`${bad ? `, system: "You draft."` : ""} }),
      },
      on: { finish: "done", "agent.fault": "failed" },
    },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
`;
}

describe.skipIf(missing.length > 0)("a run faulted by its Machine is repaired (issue 22 §2)", () => {
  let stack: Stack;
  let dataDir: string;
  let workflowsDir: string;
  const { http, events } = orchestratorHttp(() => stack);

  async function settled(runId: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 600; i++) {
      const { body } = await http(`/runs/${runId}`);
      if (body && body.status !== "running") return body;
      await sleep(100);
    }
    throw new Error(`run ${runId} did not settle`);
  }
  function jr2(args: string[]): Promise<{ code: number; out: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [cli, ...args, "--url", stack.orchestratorUrl],
        { env: { ...process.env, JR2_INSTANCE_TOKEN: stack.instanceToken }, timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
      );
    });
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "jr2-machine-fault-"));
    const here = fileURLToPath(new URL("./", import.meta.url));
    mkdirSync(join(here, ".tmp"), { recursive: true });
    workflowsDir = mkdtempSync(join(here, ".tmp", "machine-fault-"));
    writeFileSync(join(workflowsDir, "drafted.ts"), drafted(true));
    stack = await startStack("process", {
      repoRoot,
      workflowsDir,
      orchestratorEnv: { JR2_DATA_DIR: dataDir },
      models: (sim) => ({ writer: { baseUrl: sim, id: "worker:1", contextWindow: 32768, maxTokens: 1024 } }),
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workflowsDir, { recursive: true, force: true });
  });

  it("retried by `jr2 retry` and by a fork once the file is fixed, each ending succeeded; never [object Object]", async () => {
    const start = async () =>
      (
        await http("/workflows/drafted/runs", {
          method: "POST",
          body: JSON.stringify({ input: { topic: "cats" } }),
        })
      ).body?.runId as string;
    const retried = await start();
    const forked = await start();
    for (const runId of [retried, forked]) {
      const faulted = await settled(runId);
      expect(faulted).toMatchObject({ status: "faulted" });
      expect(JSON.stringify(faulted.fault)).toContain("unknown Turn input key `system`");
    }
    const outputs: string[] = [];
    // The file is unchanged: refused, naming the fix.
    const refused = await jr2(["retry", retried]);
    outputs.push(refused.out);
    expect(refused.code).not.toBe(0);
    expect(refused.out).toContain("JR2_ERR_RUN_NOT_RETRYABLE");
    expect(refused.out).toContain("fix the workflow file and restart the Orchestrator");

    await stack.killOrchestrator();
    writeFileSync(join(workflowsDir, "drafted.ts"), drafted(false));
    await stack.startOrchestrator();

    const dry = await jr2(["retry", retried]);
    outputs.push(dry.out);
    expect(dry.code, dry.out).toBe(0);
    expect(dry.out).toContain(
      "would start again from its stored input (the fault was in its initial macrostep)",
    );
    expect(dry.out).toContain(`dry run, nothing changed: retry with \`jr2 retry ${retried} --yes\``);
    expect((await http(`/runs/${retried}`)).body?.status).toBe("faulted");

    const done = await jr2(["retry", retried, "--yes", "--follow"]);
    outputs.push(done.out);
    expect(done.code, done.out).toBe(0);
    expect(done.out).toContain("started again from its stored input");
    expect(await settled(retried)).toMatchObject({ runId: retried, status: "done", outcome: "succeeded" });

    const fork = await jr2(["fork", forked, "--at", "1", "--follow"]);
    outputs.push(fork.out);
    expect(fork.code, fork.out).toBe(0);
    const forkId = /→ (\S+)/.exec(fork.out)?.[1] as string;
    expect(await settled(forkId)).toMatchObject({ status: "done", outcome: "succeeded" });

    // Nothing anywhere reads `[object Object]`: answers, logs, CLI output, history.
    for (const runId of [retried, forked, forkId]) {
      outputs.push(JSON.stringify((await http(`/runs/${runId}`)).body));
      outputs.push(JSON.stringify(await events(runId)));
      outputs.push((await jr2(["show", runId])).out);
      outputs.push((await jr2(["history", runId])).out);
    }
    for (const text of outputs) expect(text).not.toContain("[object Object]");
    const log = await events(retried);
    expect(log.find((e) => e.type === "retried")).toMatchObject({
      by: "cli",
      machineFault: { from: "input" },
    });
  }, 240_000);
});
