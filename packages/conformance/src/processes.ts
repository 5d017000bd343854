import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Child processes from the outside: a free loopback port, spawning a built script until it
 * prints its ready line, stopping it, and polling `/healthz`. Both targets run model-sim this
 * way; the process target runs the Orchestrator and the Harness this way too.
 * @see SPEC §10, §11
 */

/** A started child process and the output it printed (stdout and stderr, interleaved). */
export interface Proc {
  child: ChildProcess;
  output: () => string;
}

/**
 * Ports handed out below Linux's ephemeral range (32768–60999 by default): an outgoing
 * connection's local port is taken from that range, so one opened between this check and the
 * child's own bind could take an ephemeral "free" port (`EADDRINUSE` in CI). Never twice in a process.
 */
const LOW_PORTS = { from: 20_000, to: 32_000 } as const;
const handedOut = new Set<number>();

/** True when 127.0.0.1:`port` can be bound now (bound and released at once). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A free loopback port for a child to bind: a random one below the ephemeral range that binds
 * now and was not handed out before in this process; after 50 misses, one the OS chooses.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOW_PORTS.from + Math.floor(Math.random() * (LOW_PORTS.to - LOW_PORTS.from));
    if (handedOut.has(port) || !(await bindable(port))) continue;
    handedOut.add(port);
    return port;
  }
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `node <repoRoot>/<script> …args` in `repoRoot` with only PATH, HOME and `env`, and
 * resolves once its output matches `ready`.
 * @throws Error (rejects) if it exits first, or after `timeoutMs` ms without the line (it is then
 *   SIGKILLed); the message carries its output
 */
export function spawnUntil(
  repoRoot: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  timeoutMs = 60_000,
): Promise<Proc> {
  const child = spawn(process.execPath, [join(repoRoot, script), ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const output = () => out;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${script} printed no ready line within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve({ child, output });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code ?? signal}) before it was ready:\n${out}`));
    });
  });
}

/** Sends `signal` (default SIGTERM) and resolves once the process exited; at once if it is absent or gone. */
export function stopProc(proc: Proc | undefined, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.child.once("exit", () => resolve());
    proc.child.kill(signal);
  });
}

/**
 * Polls `GET <url>/healthz` every 200 ms until it answers 200.
 * @throws Error once `timeoutMs` ms passed without a 200
 */
export async function untilHealthy(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url}/healthz did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
