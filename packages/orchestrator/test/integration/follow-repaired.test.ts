/**
 * Issue 22 §1 on the real stack (model-sim, the Harness, the Orchestrator binaries): a run whose
 * Turn faulted (its model endpoint unreachable; routed to `failed`) is retried twice — once
 * while the endpoint is still down, once after it is back — and then waits at its Gate;
 * `jr2 follow --answer-gates` answers that Gate, follows the run to its real end (not the first
 * `failed` of its log), prints every event of the log, and exits 0.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  type ModelEntry,
  missingBinaries,
  type Stack,
  startStack,
} from "../../../conformance/src/index.js";
import { orchestratorHttp } from "./stack-http.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `mendgate`: a Turn whose fault is routed to `failed`, then a Gate, then `done`. */
const MENDGATE = `
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
const finish = defineEvent({ name: "finish", description: "Say the work is done.", audience: "agent" });
const publish = defineEvent({ name: "publish", description: "Publish it.", audience: "gate" });
export const machine = jr2Setup({
  events: [finish, publish],
  actors: { mender: agent({ model: "mender", instructions: "You mend things." }) },
}).createMachine({
  id: "mendgate",
  initial: "mending",
  states: {
    mending: {
      invoke: { src: "mender", input: { prompt: "Mend the thing." } },
      on: { finish: "publishing", "agent.fault": "failed" },
    },
    publishing: { invoke: { src: "gate", id: "publish_gate" }, on: { publish: "done" } },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
`;

/** A TCP proxy on `port` to model-sim: the model endpoint coming back. */
async function proxyTo(port: number, target: URL): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    }
    socket.pipe(upstream).pipe(socket);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe.skipIf(missing.length > 0)("jr2 follow reads a repaired run to its real end (issue 22 §1)", () => {
  let stack: Stack;
  let dataDir: string;
  let workflowsDir: string;
  let menderPort: number;
  let proxy: { close(): Promise<void> } | undefined;
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
    dataDir = mkdtempSync(join(tmpdir(), "jr2-follow-repaired-"));
    const here = fileURLToPath(new URL("./", import.meta.url));
    mkdirSync(join(here, ".tmp"), { recursive: true });
    workflowsDir = mkdtempSync(join(here, ".tmp", "follow-repaired-"));
    writeFileSync(join(workflowsDir, "mendgate.ts"), MENDGATE);
    menderPort = await freePort();
    stack = await startStack("process", {
      repoRoot,
      workflowsDir,
      orchestratorEnv: { JR2_DATA_DIR: dataDir },
      models: () => ({
        mender: {
          baseUrl: `http://127.0.0.1:${menderPort}/v1`,
          id: "worker:1",
          contextWindow: 32768,
          maxTokens: 1024,
          retry: { maxWaitMs: 1500, initialBackoffMs: 100, maxBackoffMs: 300 },
        } as ModelEntry,
      }),
    });
  }, 120_000);
  afterAll(async () => {
    await proxy?.close();
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workflowsDir, { recursive: true, force: true });
  });

  it("a run retried twice, then answered at its Gate by `jr2 follow --answer-gates`, ends succeeded; follow prints every event and exits 0", async () => {
    const runId = (await http("/workflows/mendgate/runs", { method: "POST", body: "{}" })).body
      ?.runId as string;
    expect(await settled(runId)).toMatchObject({ outcome: "failed" });
    // The first retry while the endpoint is still down: failed again.
    const first = await jr2(["retry", runId, "--follow"]);
    expect(first.code, first.out).toBe(1);
    expect(first.out).toContain(`run ${runId} outcome failed`);
    // `--answer-gates` is taken by `retry` too (it was `Unknown option` with an unbalanced quote).
    proxy = await proxyTo(menderPort, new URL(stack.simUrl));
    const second = await jr2(["retry", runId]);
    expect(second.code, second.out).toBe(0);
    for (let i = 0; i < 300 && !((await http(`/runs/${runId}`)).body?.gates?.length > 0); i++)
      await sleep(100);
    expect((await http(`/runs/${runId}`)).body?.gates).toEqual([
      expect.objectContaining({ id: "publish_gate" }),
    ]);

    const followed = await jr2(["follow", runId, "--answer-gates", "publish_gate=publish"]);
    expect(followed.code, followed.out).toBe(0);
    expect(await settled(runId)).toMatchObject({ status: "done", outcome: "succeeded" });
    expect(followed.out).toContain("gate      publish_gate ← publish (moved)");
    expect(followed.out).toContain(`run ${runId} outcome succeeded`);
    // The two earlier settlements are lines, never the end.
    expect(followed.out.match(/settled {3}failed failed — later retried/g)).toHaveLength(2);
    // Every event of the log is printed: one timed line each, plus the final status's outcome line.
    const log = await events(runId);
    expect(log.filter((e) => e.type === "retried")).toHaveLength(2);
    expect(log.filter((e) => e.type === "gate-answered")).toEqual([
      expect.objectContaining({ gate: "publish_gate", event: "publish", by: "cli" }),
    ]);
    const timed = followed.out.split("\n").filter((l) => /^\d\d:\d\d:\d\d {2}/.test(l));
    expect(timed, followed.out).toHaveLength(log.length + 1);

    // Following the settled run again prints the same log and answers nothing.
    const again = await jr2(["follow", runId, "--answer-gates", "publish_gate=publish"]);
    expect(again.code, again.out).toBe(0);
    expect(again.out).not.toContain("(moved)");
    expect((await events(runId)).filter((e) => e.type === "gate-answered")).toHaveLength(1);
  }, 180_000);

  it("an unknown option is named in a balanced message with the command's usage", async () => {
    const bad = await jr2(["retry", "nope", "--answer-gate", "x"]);
    expect(bad.code).not.toBe(0);
    expect(bad.out).toContain("jr2 retry: unknown option `--answer-gate`");
    expect(bad.out).toContain("usage: jr2 retry <runId> [--yes] [--force] [--follow] [--answer-gates");
    expect(bad.out).not.toContain(`'-- "`);
  });
});
