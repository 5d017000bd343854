/**
 * The escape suite's stack (issue 26 "Rules"): a real Harness (buildHarness, listening on a
 * loopback port) with the sandbox ON, a fake Orchestrator, a scripted model server, and two live
 * runs side by side — run B holds a secret file and a process in its own sandbox. Each case is a
 * real Working-tool call: the model server's script calls the tool, the Harness runs it in run
 * A's sandbox, and the tool result the model reads is taken from the next request's body.
 * A missing bwrap fails under CI=true and skips elsewhere. As root (CI) the sandbox runs as uid
 * 10001 — never root.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type EgressResolver,
  ownForSandbox,
  probeSandbox,
  type SandboxedService,
  type SandboxProbe,
  spawnService,
  type ToolLimits,
} from "@jr2/sandbox";
import type { StreamEvent } from "@jr2/wire";
import type { WorkingSandbox } from "../../src/tools/sandbox/working-sandbox.js";
import { type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";
import { harnessFor, TOKEN } from "../fixtures/harness.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../fixtures/scripted-upstream.js";
import { messagesOf } from "../fixtures/upstream-harness.js";

export const probe: SandboxProbe = await probeSandbox();
if (!probe.ok && process.env.CI === "true") {
  throw new Error(`CI=true and the sandbox does not work: ${probe.layer} (${probe.detail}); ${probe.fix}`);
}
/** Skip (outside CI only) where bwrap cannot run. */
export const noSandbox = !probe.ok;

/** The Harness's bearer as main.ts would have it in its environment (and `pnpm start` in the Orchestrator's). */
export const HARNESS_TOKEN = TOKEN;

/** The real sandbox this machine has (`probe`), as a Harness takes it; `limits` lowers its tool limits. */
export function realSandbox(limits?: Partial<ToolLimits>): WorkingSandbox {
  if (!probe.ok) throw new Error("no sandbox");
  return {
    mode: "on",
    bwrap: probe.bwrap,
    user: probe.user,
    memory: probe.memory,
    ...(limits ? { limits } : {}),
  };
}

export interface EscapeStack {
  base: string;
  runA: string;
  runB: string;
  secretB: string;
  secretText: string;
  /** run B's live sandboxed process (its host pid is bwrap's). */
  serviceB: SandboxedService;
  orch: FakeOrchestrator;
  upstream: ScriptedUpstream;
  /** The Harness's own listening port (a real socket, for the loopback case). */
  harnessPort: number;
  /** Runs one Working-tool call in run A's sandbox; answers the tool result the model read. */
  call(
    tool: string,
    args: Record<string, unknown>,
    opts?: { network?: string[] | "host" },
  ): Promise<{ result: string; events: StreamEvent[] }>;
  close(): Promise<void>;
}

let turns = 0;

/**
 * Starts the stack. `limits` lowers the sandbox's tool limits (the disk-fill case writes 1 MB,
 * not 256 MiB); `resolve` serves a loopback server under an allowed name through the proxy.
 */
export async function startEscapeStack(
  opts: { limits?: Partial<ToolLimits>; resolve?: EgressResolver } = {},
): Promise<EscapeStack> {
  if (!probe.ok) throw new Error("no sandbox");
  const base = await mkdtemp(join(tmpdir(), "jr2-escapes-"));
  await chmod(base, 0o755);
  const runA = join(base, "runA");
  const runB = join(base, "runB");
  await mkdir(runA);
  await mkdir(runB);
  const secretText = `B-SECRET-${Math.random().toString(36).slice(2)}`;
  const secretB = join(runB, "secret.txt");
  await writeFile(secretB, secretText);
  await writeFile(join(runA, "mine.txt"), "A-OWN\n");
  await ownForSandbox(runB);
  const serviceB = await spawnService(
    {
      root: runB,
      access: "write",
      env: { PATH: "/usr/bin:/bin" },
      argv: ["bash", "-c", "echo up; exec sleep 600"],
    },
    { egress: "none" },
  );
  await new Promise((ok) => serviceB.process.stdout?.once("data", ok));
  const orch = await startFakeOrchestrator();
  const upstream = await startScriptedUpstream();
  const h = harnessFor(upstream, orch, {
    sandbox: realSandbox(opts.limits),
    ...(opts.resolve ? { egressResolve: opts.resolve } : {}),
  });
  await h.app.listen({ port: 0, host: "127.0.0.1" });
  const harnessPort = (h.app.server.address() as { port: number }).port;
  const call: EscapeStack["call"] = async (tool, args, callOpts = {}) => {
    const before = upstream.bodies.length;
    upstream.script([
      { sse: answer({ toolCalls: [{ name: tool, arguments: JSON.stringify(args) }] }) },
      { sse: answer({ content: "noted" }) },
    ]);
    const { events, settlement } = await h.run(`escape/coder/${++turns}`, {
      definition: { model: "sim", instructions: "i", workspace: "write" },
      cwd: runA,
      ...(callOpts.network ? { network: callOpts.network } : {}),
    });
    if (settlement.outcome !== "completed")
      throw new Error(`Turn ${settlement.outcome}: ${settlement.error?.message}`);
    const next = upstream.bodies[before + 1];
    if (!next) throw new Error("the model was never told the tool's result");
    const tools = messagesOf(next).filter((m) => m.role === "tool");
    return { result: String(tools.at(-1)?.content), events };
  };
  return {
    base,
    runA,
    runB,
    secretB,
    secretText,
    serviceB,
    orch,
    upstream,
    harnessPort,
    call,
    async close() {
      await h.app.close();
      await serviceB.stop();
      await upstream.close();
      await orch.close();
      await rm(base, { recursive: true, force: true });
    },
  };
}
