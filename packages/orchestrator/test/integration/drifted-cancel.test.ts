/**
 * Issue 22 §3 on the real stack (model-sim, the Harness, the Orchestrator binaries): a run whose
 * workflow lost the state it is in can be neither resumed nor forked; `jr2 cancel` closes it —
 * outcome `cancelled`, on its log with who asked, its Harness conversation aborted. The start
 * banner counts the drifted runs, `jr2 runs` shows the state a drifted run was saved in, and a
 * cancel racing a resume of a resumable drifted run: exactly one wins, the other is told which.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunFeedEvent } from "@jr2/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, startStack } from "../../../conformance/src/index.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
type Json = Record<string, any>;

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `coded`: a \`coder\` Turn in state `state` (renamed to drop the state a run is in). */
function coded(state: "coding" | "writing" | "coding+extra"): string {
  const name = state === "writing" ? "writing" : "coding";
  return `
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
const finish = defineEvent({ name: "finish", description: "Say the code is done.", audience: "agent" });
export const machine = jr2Setup({
  events: [finish],
  actors: { coder: agent({ model: "coder", instructions: "You write code." }) },
}).createMachine({
  id: "coded",
  initial: "${name}",
  states: {
    ${name}: {
      invoke: { src: "coder", input: { prompt: "Write the code.", continue: true } },
      on: { finish: "done", "agent.fault": "failed" },
    },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
    ${state === "coding+extra" ? "extra: {}," : ""}
  },
});
`;
}

describe.skipIf(missing.length > 0)("closing a drifted run (issue 22 §3)", () => {
  let stack: Stack;
  let dataDir: string;
  let workflowsDir: string;

  async function http(path: string, init: RequestInit = {}, headers: Record<string, string> = {}) {
    const res = await fetch(`${stack.orchestratorUrl}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${stack.instanceToken}`,
        "content-type": "application/json",
        ...headers,
      },
      signal: AbortSignal.timeout(20_000),
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as Json | null };
  }
  async function events(runId: string): Promise<RunFeedEvent[]> {
    const res = await fetch(`${stack.orchestratorUrl}/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${stack.instanceToken}` },
      signal: AbortSignal.timeout(20_000),
    });
    return (await res.text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as RunFeedEvent);
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
  /** Starts a `coded` run and waits until its Turn's model request is at model-sim. */
  async function runInFlight(): Promise<string> {
    const before = (await stack.requests()).length;
    const runId = (await http("/workflows/coded/runs", { method: "POST", body: "{}" })).body?.runId as string;
    for (let i = 0; i < 200 && (await stack.requests()).length <= before; i++) await sleep(50);
    return runId;
  }
  async function deploy(variant: Parameters<typeof coded>[0]) {
    await stack.killOrchestrator();
    writeFileSync(join(workflowsDir, "coded.ts"), coded(variant));
    await stack.startOrchestrator();
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "jr2-drift-cancel-"));
    const here = fileURLToPath(new URL("./", import.meta.url));
    mkdirSync(join(here, ".tmp"), { recursive: true });
    workflowsDir = mkdtempSync(join(here, ".tmp", "drift-cancel-"));
    writeFileSync(join(workflowsDir, "coded.ts"), coded("coding"));
    stack = await startStack("process", {
      repoRoot,
      workflowsDir,
      orchestratorEnv: { JR2_DATA_DIR: dataDir },
      // Slow: the Turn is still in flight at the Harness when the Orchestrator is stopped.
      models: (sim) => ({
        coder: { baseUrl: sim, id: "worker:1+latency:15000", contextWindow: 32768, maxTokens: 1024 },
      }),
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workflowsDir, { recursive: true, force: true });
  });

  it("closes a drifted run whose state was removed with `jr2 cancel`: cancelled, logged with who asked, its conversation aborted", async () => {
    const runId = await runInFlight();
    const logStart = stack.orchestratorLog().length;
    await deploy("writing");
    expect((await http(`/runs/${runId}`)).body?.status).toBe("drifted");
    // The banner counts it and says where to look.
    expect(stack.orchestratorLog().slice(logStart)).toContain(
      "1 run drifted (the workflow changed under it): list them with `jr2 runs --status drifted`",
    );
    const listed = await jr2(["runs", "--status", "drifted"]);
    expect(listed.out).toMatch(new RegExp(`${runId}\\s+coded\\s+drifted\\s+saved at coding`));

    const refused = await jr2(["resume", runId, "--accept-drift"]);
    expect(refused.out).toContain("JR2_ERR_RUN_RESUME_STATES_MISSING");
    const versions = ((await http(`/runs/${runId}/history`)).body?.versions ?? []) as Json[];
    // The Turn's admission is a version of its own (issue 22 §4: it was `step` before).
    expect(versions.map((v) => v.cause)).toContainEqual({
      kind: "admission",
      child: "coding#coder",
      agent: "coder",
    });
    const last = versions.at(-1)?.version as number;
    const ledger = ((await http(`/runs/${runId}/history/${last}`)).body?.ledger ?? []) as Json[];
    const turnIid = ledger[0]?.iid as string;
    expect(turnIid).toBeTruthy();

    const cancelled = await jr2(["cancel", runId]);
    expect(cancelled.out).toContain(`run ${runId} cancelled (it was drifted`);
    expect(cancelled.code, cancelled.out).toBe(0);
    expect((await http(`/runs/${runId}`)).body).toMatchObject({ status: "cancelled", outcome: "cancelled" });
    const log = await events(runId);
    expect(log.at(-1)).toMatchObject({
      type: "status",
      status: "cancelled",
      outcome: "cancelled",
      by: "cli",
    });
    expect((log.at(-1) as { reason?: string }).reason).toContain("cancelled while drifted");
    const history = (await http(`/runs/${runId}/history`)).body?.versions as Json[];
    expect(history.at(-1)).toMatchObject({ status: "cancelled", cause: { kind: "cancel" } });
    const turns = (await http(`/runs/${runId}/turns`)).body?.turns as Json[];
    expect(turns.every((t) => t.endedAt !== null)).toBe(true);

    // Its conversation at the Harness was aborted (the abort leaves after the commit).
    let settlements: Json[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${stack.harnessUrl}/conversations/${encodeURIComponent(turnIid)}/history`, {
        headers: { authorization: `Bearer ${stack.harnessToken}` },
      });
      settlements = ((await res.json()) as Json).settlements ?? [];
      if (settlements.some((s) => s.outcome === "aborted")) break;
      await sleep(100);
    }
    expect(settlements.map((s) => s.outcome)).toContain("aborted");

    // A second cancel is refused: it is settled now.
    const again = await jr2(["cancel", runId]);
    expect(again.out).toContain("JR2_ERR_RUN_NOT_LIVE");
    expect(again.code).not.toBe(0);
  }, 120_000);

  it("a cancel and a resume racing on a resumable drifted run: exactly one wins, the other is told which", async () => {
    await deploy("coding");
    const runId = await runInFlight();
    await deploy("coding+extra");
    expect((await http(`/runs/${runId}`)).body?.status).toBe("drifted");

    const [cancel, resume] = await Promise.all([
      http(
        `/runs/${runId}/cancel`,
        { method: "POST", body: JSON.stringify({ expect: "drifted" }) },
        { "x-jr2-client": "console" },
      ),
      http(
        `/runs/${runId}/resume`,
        { method: "POST", body: JSON.stringify({ acceptDrift: true }) },
        { "x-jr2-client": "cli" },
      ),
    ]);
    const won = [cancel, resume].filter((r) => r.status === 200);
    const lost = [cancel, resume].filter((r) => r.status === 409);
    expect(won, JSON.stringify([cancel, resume])).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.body?.code).toBe("JR2_ERR_RUN_STATUS_CHANGED");
    const winner = won[0] === cancel ? "cancelled by console" : "resumed by cli";
    expect(lost[0]!.body?.error).toContain(winner);
    const log = await events(runId);
    const resumes = log.filter((e) => e.type === "resumed").length;
    const cancels = log.filter((e) => e.type === "status" && e.status === "cancelled").length;
    expect([resumes, cancels]).toEqual(won[0] === cancel ? [0, 1] : [1, 0]);
    if (won[0] === resume) await http(`/runs/${runId}/cancel`, { method: "POST", body: "{}" });
  }, 120_000);

  it("an older client's cancel (no body, no x-jr2-client) still closes a drifted run, logged `by: http`", async () => {
    const runId = await runInFlight();
    await deploy("writing");
    expect((await http(`/runs/${runId}`)).body?.status).toBe("drifted");
    const res = await fetch(`${stack.orchestratorUrl}/runs/${runId}/cancel`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.instanceToken}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ runId, status: "cancelled" });
    expect((await events(runId)).at(-1)).toMatchObject({ type: "status", status: "cancelled", by: "http" });
  }, 120_000);
});
