/**
 * Issue 13 items 3 and 4 on the real stack (model-sim, the Harness, the Orchestrator binaries;
 * ADR-0271), the done-when:
 * - a run whose Turn faulted because its model endpoint was unreachable (a closed 127.0.0.1
 *   port; routed to the `failed` outcome) is retried with `jr2 retry --follow` once the endpoint
 *   is back (a proxy to model-sim opens on that port) and succeeds, under the same runId;
 * - a run drifted by a changed workflow file whose states still exist resumes with
 *   `jr2 resume --accept-drift` and finishes; one whose current state was removed is refused,
 *   naming the state.
 * The workflows are written to a folder below this one (so they resolve `@jr2/orchestrator`)
 * and swapped between Orchestrator starts, as a deploy would.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunFeedEvent } from "@jr2/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  type ModelEntry,
  missingBinaries,
  type Stack,
  startStack,
} from "../../../conformance/src/index.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
type Json = Record<string, any>;

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `mend`: one Turn (`mender`, a continued conversation); a fault is routed to `failed`. */
const MEND = `
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
const finish = defineEvent({ name: "finish", description: "Say the work is done.", audience: "agent" });
export const machine = jr2Setup({
  events: [finish],
  actors: { mender: agent({ model: "mender", instructions: "You mend things." }) },
}).createMachine({
  id: "mend",
  initial: "mending",
  states: {
    mending: {
      invoke: { src: "mender", input: { prompt: "Mend the thing.", continue: true } },
      on: { finish: "done", "agent.fault": "failed" },
    },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
`;

/** `gated`: a Gate in state \`waiting\` (renamed \`pending\` in "removed"; an extra state in "extra"). */
function gated(variant: "v1" | "extra" | "removed"): string {
  const waiting = variant === "removed" ? "pending" : "waiting";
  return `
import { defineEvent, jr2Setup } from "@jr2/orchestrator";
const approve = defineEvent({ name: "approve", description: "Approve.", audience: "gate" });
export const machine = jr2Setup({ events: [approve] }).createMachine({
  id: "gated",
  initial: "${waiting}",
  states: {
    ${waiting}: { invoke: { src: "gate", id: "approve_gate" }, on: { approve: "done" } },
    done: { type: "final" },
    ${variant === "extra" ? "extra: {}," : ""}
  },
});
`;
}

/** `coded`: a continued \`coder\` Turn; "wider" adds \`note\` to the coder's Menu (its tools block changes). */
function coded(variant: "v1" | "wider"): string {
  return `
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
const finish = defineEvent({ name: "finish", description: "Say the code is done.", audience: "agent" });
const note = defineEvent({ name: "note", description: "Note something; the Turn goes on.", audience: "agent" });
export const machine = jr2Setup({
  events: [finish, note],
  actors: { coder: agent({ model: "coder", instructions: "You write code." }) },
}).createMachine({
  id: "coded",
  initial: "coding",
  states: {
    coding: {
      invoke: { src: "coder", input: { prompt: "Write the code.", continue: true } },
      on: { finish: "done", ${variant === "wider" ? "note: {}, " : ""}"agent.fault": "failed" },
    },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
`;
}

/** A TCP proxy on `port` to model-sim: the model endpoint coming back; `close` takes it down again. */
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

describe.skipIf(missing.length > 0)("resume and retry on the real stack (issue 13, ADR-0271)", () => {
  let stack: Stack;
  let dataDir: string;
  let workflowsDir: string;
  let menderPort: number;
  let proxy: { close(): Promise<void> } | undefined;

  async function http(path: string, init: RequestInit = {}) {
    const res = await fetch(`${stack.orchestratorUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
      signal: AbortSignal.timeout(20_000),
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as Json | null };
  }
  async function settled(runId: string, timeoutMs = 60_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await http(`/runs/${runId}`);
      if (body && body.status !== "running") return body;
      if (Date.now() > deadline) throw new Error(`run ${runId} did not settle: ${JSON.stringify(body)}`);
      await sleep(100);
    }
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
  /** Restarts the Orchestrator with `gated` written as `variant`. */
  async function deploy(variant: "v1" | "extra" | "removed") {
    await stack.killOrchestrator();
    writeFileSync(join(workflowsDir, "gated.ts"), gated(variant));
    await stack.startOrchestrator();
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "jr2-operate-"));
    const here = fileURLToPath(new URL("./", import.meta.url));
    mkdirSync(join(here, ".tmp"), { recursive: true });
    workflowsDir = mkdtempSync(join(here, ".tmp", "operate-"));
    writeFileSync(join(workflowsDir, "mend.ts"), MEND);
    writeFileSync(join(workflowsDir, "gated.ts"), gated("v1"));
    writeFileSync(join(workflowsDir, "coded.ts"), coded("v1"));
    // Nothing listens here until the test opens the proxy: the endpoint is unreachable.
    menderPort = await freePort();
    stack = await startStack("process", {
      repoRoot,
      workflowsDir,
      orchestratorEnv: { JR2_DATA_DIR: dataDir },
      models: (sim) => ({
        // Slow to answer, so a Turn is still live when the Orchestrator is stopped.
        coder: { baseUrl: sim, id: "worker:1+latency:2500", contextWindow: 32768, maxTokens: 1024 },
        mender: {
          baseUrl: `http://127.0.0.1:${menderPort}/v1`,
          id: "worker:1",
          contextWindow: 32768,
          maxTokens: 1024,
          // Wait for the endpoint briefly, then fault `unavailable` (a transient outage).
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

  it("retries a Turn faulted by an unreachable model endpoint once it is back: the same run succeeds", async () => {
    const started = await http("/workflows/mend/runs", { method: "POST", body: JSON.stringify({}) });
    expect(started.status).toBe(201);
    const runId = started.body?.runId as string;
    const failed = await settled(runId);
    expect(failed).toMatchObject({ status: "done", outcome: "failed", value: "failed" });
    expect(failed.faults).toEqual([
      expect.objectContaining({ agent: "mender", cause: "unavailable", routed: true }),
    ]);

    proxy = await proxyTo(menderPort, new URL(stack.simUrl));
    const retried = await jr2(["retry", runId, "--follow"]);
    expect(retried.out).toMatch(
      new RegExp(`run ${runId} retried mending#mender from version \\d+ as Turn \\S+`),
    );
    expect(retried.out).toContain("retried   mending#mender from version");
    expect(retried.code, retried.out).toBe(0);

    const after = await settled(runId);
    expect(after).toMatchObject({ runId, status: "done", outcome: "succeeded", value: "done" });
    const turns = (await http(`/runs/${runId}/turns`)).body?.turns as Json[];
    expect(turns.map((t) => t.outcome)).toEqual(["faulted", "picked"]);
    expect(turns[1]!.turnId).not.toBe(turns[0]!.turnId);
    // Admitted on a new conversation with its task, told so: the one model request model-sim saw.
    const requests = await stack.requests();
    expect(requests).toHaveLength(1);
    const sent = JSON.stringify(requests[0]);
    expect(sent).toContain("Mend the thing.");
    expect(sent).toContain("This is a new conversation");
    const log = await events(runId);
    const retriedAt = log.findIndex((e) => e.type === "retried");
    expect(log[retriedAt]).toMatchObject({ by: "cli", child: "mending#mender", turnId: turns[1]!.turnId });
    // One pick delivered per Turn: the faulted one picked nothing, the retried one finished once.
    expect(log.filter((e) => e.type === "pick").map((e) => (e as { name: string }).name)).toEqual(["finish"]);
    // A succeeded run has nothing to retry.
    const again = await jr2(["retry", runId]);
    expect(again.out).toContain("JR2_ERR_RUN_NOT_RETRYABLE");
    expect(again.code).not.toBe(0);
    await proxy.close();
    proxy = undefined;
  }, 120_000);

  // The crash trial: the Orchestrator SIGKILLs itself at a crash point reached during the retry
  // (the retried Turn's admission, or its pick delivered before the answer), then starts again.
  it.each(["admit-sent", "pick-delivered"])(
    "a kill at %s during a retry leaves no lost run and no duplicate pick",
    async (phase) => {
      const started = await http("/workflows/mend/runs", { method: "POST", body: JSON.stringify({}) });
      const runId = started.body?.runId as string;
      expect(await settled(runId)).toMatchObject({ outcome: "failed" });
      // This life's first `phase` is the retry's.
      await stack.killOrchestrator();
      await stack.startOrchestrator({ JR2_CRASH_AT: phase });
      const logStart = stack.orchestratorLog().length;
      proxy = await proxyTo(menderPort, new URL(stack.simUrl));
      await fetch(`${stack.orchestratorUrl}/runs/${runId}/retry`, {
        method: "POST",
        headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
        body: "{}",
      }).catch(() => undefined);
      for (
        let i = 0;
        i < 200 && !stack.orchestratorLog().slice(logStart).includes(`jr2 crash-point ${phase}`);
        i++
      )
        await sleep(100);
      expect(stack.orchestratorLog().slice(logStart)).toContain(`jr2 crash-point ${phase}`);
      await stack.killOrchestrator();
      await stack.startOrchestrator();

      const after = await settled(runId);
      expect(after, stack.orchestratorLog().slice(-2000)).toMatchObject({
        runId,
        status: "done",
        outcome: "succeeded",
      });
      const log = await events(runId);
      expect(log.filter((e) => e.type === "retried")).toHaveLength(1);
      const picks = log.filter((e) => e.type === "pick") as Array<{ name: string; answer: Json }>;
      expect(picks.map((p) => p.name)).toEqual(["finish"]);
      const turns = (await http(`/runs/${runId}/turns`)).body?.turns as Json[];
      expect(turns.map((t) => t.outcome)).toEqual(["faulted", "picked"]);
      await proxy.close();
      proxy = undefined;
    },
    120_000,
  );

  it("resumes a drifted run whose states still exist, and it finishes; refuses one whose state was removed, naming it", async () => {
    const first = (await http("/workflows/gated/runs", { method: "POST", body: "{}" })).body?.runId as string;
    await deploy("extra");
    expect((await http(`/runs/${first}`)).body).toMatchObject({ status: "drifted", value: "waiting" });

    const dry = await jr2(["resume", first]);
    expect(dry.out).toContain("state waiting (Machine (top)): still there");
    expect(dry.out).toContain(`dry run, nothing changed: resume with \`jr2 resume ${first} --accept-drift\``);
    expect(dry.code).toBe(0);
    expect((await http(`/runs/${first}`)).body?.status).toBe("drifted");

    const resumed = await jr2(["resume", first, "--accept-drift"]);
    expect(resumed.out).toContain(`run ${first} (workflow gated) resumed`);
    expect(resumed.code).toBe(0);
    const answered = await jr2(["gate", first, "approve_gate", "approve"]);
    expect(answered.code, answered.out).toBe(0);
    expect(await settled(first)).toMatchObject({ status: "done", value: "done" });
    expect((await events(first)).find((e) => e.type === "resumed")).toMatchObject({ by: "cli" });

    const second = (await http("/workflows/gated/runs", { method: "POST", body: "{}" })).body
      ?.runId as string;
    await deploy("removed");
    expect((await http(`/runs/${second}`)).body?.status).toBe("drifted");
    const refused = await jr2(["resume", second, "--accept-drift"]);
    expect(refused.out).toContain("JR2_ERR_RUN_RESUME_STATES_MISSING");
    expect(refused.out).toContain("state `waiting` (Machine `(top)`)");
    expect(refused.code).not.toBe(0);
    expect((await http(`/runs/${second}`)).body?.status).toBe("drifted");
  }, 120_000);

  it("resumes a live Turn whose Agent's Menu changed on a new conversation with its task, told so; the run succeeds", async () => {
    const runId = (await http("/workflows/coded/runs", { method: "POST", body: "{}" })).body?.runId as string;
    // Its Turn is admitted and its model request in flight: stop, deploy the wider Menu, start.
    for (let i = 0; i < 100 && !((await http(`/runs/${runId}`)).body?.turns?.length > 0); i++)
      await sleep(50);
    await sleep(700); // admitted by now; model-sim answers after 2.5 s
    const before = (await stack.requests()).length;
    await stack.killOrchestrator();
    writeFileSync(join(workflowsDir, "coded.ts"), coded("wider"));
    await stack.startOrchestrator();
    expect((await http(`/runs/${runId}`)).body?.status).toBe("drifted");

    const dry = await jr2(["resume", runId]);
    expect(dry.out).toContain("Menu of coder: changed (bytes-differ)");
    expect(dry.out).toContain("would move onto a new conversation: coding#coder");
    const resumed = await jr2(["resume", runId, "--accept-drift", "--follow"]);
    expect(resumed.out).toContain("moved onto a new conversation: coding#coder");
    expect(resumed.code, resumed.out).toBe(0);
    expect(await settled(runId)).toMatchObject({ status: "done", outcome: "succeeded" });

    // The new conversation's first request: the task, the notice, and the wider tools block.
    const after = (await stack.requests()).slice(before).map((r) => r.raw);
    const opening = after.find((raw) => raw.includes("This is a new conversation"));
    expect(opening, after.join("\n")).toBeDefined();
    expect(opening).toContain("Write the code.");
    expect(opening).toContain('"note"');
    const turns = (await http(`/runs/${runId}/turns`)).body?.turns as Json[];
    expect(turns.map((t) => t.outcome)).toEqual(["left", "picked"]);
    const log = await events(runId);
    expect(log.find((e) => e.type === "resumed")).toMatchObject({ moved: ["coding#coder"], by: "cli" });
    expect(log.filter((e) => e.type === "pick").map((e) => (e as { name: string }).name)).toEqual(["finish"]);
  }, 120_000);
});
