/**
 * spawnService: a long-lived process of a run — a future MCP server, an external agent
 * (issue 26 item 5) — in the run's sandbox with the same mounts as its tools, no tool limits,
 * and an explicit egress list.
 */
import type { ChildProcess } from "node:child_process";
import { type EgressResolver, startEgressProxy } from "./egress-proxy.js";
import { spawnSandboxed } from "./sandbox-process.js";
import type { SandboxProcessSpec } from "./spec.js";

export interface ServiceEgress {
  /** `"none"`, `"host"` (every host and loopback service), or the host names it may reach. */
  egress: "none" | "host" | readonly string[];
  /** Resolves allowed names (default: the system resolver). */
  resolve?: EgressResolver;
}

/** A running service: its process (bwrap; stdio pipes) and how to stop it. */
export interface SandboxedService {
  readonly process: ChildProcess;
  /** Resolves with the exit code (`null` when killed) once every process of it is gone. */
  readonly exited: Promise<number | null>;
  /** Kills the sandbox (its whole PID namespace) and closes its egress proxy. */
  stop(): Promise<number | null>;
}

/**
 * Starts `spec.argv` in the run's sandbox until stopped. `spec.network` is ignored: `egress`
 * decides (a list starts a proxy of its own, closed with the service).
 * stdin is closed unless `spec.stdin` is `"pipe"` (a stdio MCP server, issue 29).
 */
export async function spawnService(
  spec: Omit<SandboxProcessSpec, "network">,
  { egress, resolve }: ServiceEgress,
): Promise<SandboxedService> {
  const proxy =
    typeof egress === "object"
      ? await startEgressProxy({ allow: egress, ...(resolve ? { resolve } : {}) })
      : undefined;
  const network = proxy ?? (egress === "host" ? "host" : "none");
  let child: ChildProcess;
  try {
    child = spawnSandboxed({ ...spec, network });
  } catch (err) {
    await proxy?.close();
    throw err;
  }
  const exited = new Promise<number | null>((ok) => {
    child.once("error", () => ok(null));
    child.once("close", (code) => ok(code));
  }).finally(() => proxy?.close());
  return {
    process: child,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      return exited;
    },
  };
}
