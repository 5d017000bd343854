/**
 * The Harness adapter of `@jr2/sandbox` (issue 26, ADR-0173): pi-coding-agent's seven Working
 * tools built on one run's sandboxed operations, as packages/sandbox/README.md's table maps
 * them — read/write/edit/ls through the confined file operations (realpath inside the run's
 * root, O_NOFOLLOW, no hard-linked file), bash and find's glob as processes inside bubblewrap
 * (no other run's directory, no Harness process or environment, no network unless allowed),
 * grep's search path realpath-checked before pi spawns `rg`.
 */
import { resolve } from "node:path";
import {
  type EgressProxy,
  ownForSandbox,
  type RunToolOperations,
  runToolOperations,
  type SandboxUser,
  type ToolLimits,
} from "@jr2/sandbox";
import type { WorkspaceAccess } from "@jr2/wire";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import type { Redactor } from "../secret-redaction.js";
import { scrubEnvironment } from "../working-environment.js";

/** A run's network as the adapter takes it: none, the run's egress proxy, or the host's. */
export type WorkingNetwork = "none" | "host" | EgressProxy;

/** What a run's sandboxed tools share. */
export interface SandboxedRun {
  access: Exclude<WorkspaceAccess, "none">;
  cwd: string;
  secrets: Redactor;
  user: SandboxUser;
  network: WorkingNetwork;
  limits?: Partial<ToolLimits>;
  /**
   * Further host paths bound read-only at the same place (a Repo Slot's run repository and its
   * mirror's objects, so the tool's own read-only git works; ADR-0214).
   */
  readOnly?: readonly string[];
  /** Variables added to every tool process's environment after scrubbing (git's safe.directory). */
  env?: Readonly<Record<string, string>>;
}

type Pi = typeof import("@mariozechner/pi-coding-agent");
type Factory = (cwd: string) => AgentTool;

/**
 * The factories of the sandboxed Working tools of one run. The run's directory is re-owned for
 * the sandbox's uid first when the Harness is root (`ownForSandbox`), so `write` works inside.
 * The environment bash starts with is the Harness's scrubbed of `JR2_*` and secrets (ADR-0158),
 * as before; bwrap never passes the Harness's own.
 */
export async function sandboxedFactories(pi: Pi, run: SandboxedRun): Promise<Record<string, Factory>> {
  if (run.access === "write") await ownForSandbox(run.cwd, run.user);
  const scrub = (env: NodeJS.ProcessEnv) => ({ ...scrubEnvironment(env, run.secrets), ...run.env });
  const ops = await runToolOperations({
    root: run.cwd,
    access: run.access,
    env: scrub(process.env),
    network: run.network,
    user: run.user,
    ...(run.limits ? { limits: run.limits } : {}),
    ...(run.readOnly?.length ? { readOnly: run.readOnly } : {}),
  });
  const tool = (t: unknown) => t as AgentTool;
  return {
    read: (c) => tool(pi.createReadTool(c, { operations: ops.read })),
    write: (c) => tool(pi.createWriteTool(c, { operations: ops.write })),
    edit: (c) => tool(pi.createEditTool(c, { operations: ops.edit })),
    ls: (c) => tool(pi.createLsTool(c, { operations: ops.ls })),
    find: (c) => tool(pi.createFindTool(c, { operations: ops.find })),
    grep: (c) => realPathChecked(tool(pi.createGrepTool(c, { operations: ops.grep })), c, ops),
    // pi's spawnHook still fills the environment (scrubbed); the process runs inside bwrap.
    bash: (c) =>
      tool(
        pi.createBashTool(c, {
          operations: ops.bash,
          spawnHook: (spawn) => ({ ...spawn, env: scrub(spawn.env) }),
        }),
      ),
  };
}

/**
 * grep: pi spawns `rg` in the Harness's process, so its search path is resolved to its real
 * path inside the run's root first (a symlink to another run's directory is refused with the
 * sandbox's reason) and `rg` is given that real path. `rg` follows no symlink while walking.
 */
function realPathChecked(grep: AgentTool, cwd: string, ops: RunToolOperations): AgentTool {
  return {
    ...grep,
    execute: async (toolCallId, params, signal, onUpdate) => {
      const p = params as { path?: unknown };
      const asked = typeof p.path === "string" && p.path !== "" ? p.path : ".";
      let real: string;
      try {
        real = await ops.files.realPathInside(resolve(cwd, asked));
      } catch (err) {
        // A missing path: pi's own "Path not found" (its isDirectory is confined too).
        if ((err as { code?: string }).code !== "ENOENT") throw err;
        return grep.execute(toolCallId, params, signal, onUpdate);
      }
      return grep.execute(toolCallId, { ...p, path: real } as never, signal, onUpdate);
    },
  };
}
