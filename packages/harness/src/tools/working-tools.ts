import { writeFile } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import type { WorkspaceAccess } from "@jr2/wire";
import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import { sandboxedFactories, type WorkingNetwork } from "./sandbox/sandboxed-tools.js";
import type { WorkingSandbox } from "./sandbox/working-sandbox.js";
import type { Redactor } from "./secret-redaction.js";
import { makeDirectories } from "./working-directory.js";
import { scrubEnvironment } from "./working-environment.js";

/** Default bash timeout (seconds) when the model sets none; pi's bash has no default (§13). */
export const BASH_TIMEOUT_S = 120;

/** Which Working tools an access level gets, in tools-block order (§7.2 step 2). */
export const WORKING_TOOLS_BY_ACCESS: Record<WorkspaceAccess, readonly string[]> = {
  none: [],
  read: ["read", "grep", "find", "ls"],
  write: ["read", "write", "edit", "bash", "grep", "find", "ls"],
};

/** True when `path` (relative to `cwd`, or absolute) stays inside `cwd`. */
export function insideCwd(cwd: string, path: string): boolean {
  const rel = relative(cwd, resolve(cwd, path));
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** How a run's Working tools are confined: the Harness's sandbox and the run's network. */
export interface WorkingToolsSandbox {
  sandbox: WorkingSandbox;
  /** Default `"none"`: no network inside the sandbox. */
  network?: WorkingNetwork;
  /** Extra read-only binds and environment (a Repo Slot's git, ADR-0214); sandbox `on` only. */
  extra?: { readOnly: readonly string[]; env: Readonly<Record<string, string>> };
}

/**
 * The Working tools for an access level, rooted at `cwd` (pi-coding-agent's own tools).
 * With a sandbox that is `on`, every tool goes through `@jr2/sandbox` (tools/sandbox/, ADR-0173):
 * the file tools confined by real path, bash and find inside bubblewrap. Without one (no
 * `confinement`, or `JR2_SANDBOX=off`) they run as the Harness's own process, paths checked by
 * text only (`insideCwd`, the engine's pre-check) — the pre-issue-26 behaviour.
 * bash starts with the Harness's environment scrubbed of `JR2_*` and secrets (pi's
 * `spawnHook`), and every tool's result and error text reaches its caller with the Harness's
 * secret values replaced by `[redacted]` (`secrets`, built once by buildHarness; ADR-0158).
 * Loaded lazily: pi-coding-agent is large and `workspace: "none"` never needs it.
 * pi's grep and find download ripgrep / fd from GitHub when the machine lacks them; a Harness
 * never fetches binaries at run time (offline machines, no traffic outside the model table):
 * `PI_OFFLINE` is set unless the operator set it. Install `ripgrep` and `fd-find` (the image has them).
 * @see SPEC §7.2, §13
 */
export async function createWorkingTools(
  access: WorkspaceAccess,
  cwd: string,
  secrets: Redactor,
  confinement?: WorkingToolsSandbox,
): Promise<AgentTool[]> {
  const names = WORKING_TOOLS_BY_ACCESS[access];
  if (names.length === 0 || access === "none") return [];
  process.env.PI_OFFLINE ??= "1";
  const pi = await import("@mariozechner/pi-coding-agent");
  const sandbox = confinement?.sandbox;
  if (sandbox?.mode === "on") {
    const factories = await sandboxedFactories(pi, {
      access,
      cwd,
      secrets,
      user: sandbox.user,
      network: confinement?.network ?? "none",
      ...(sandbox.limits ? { limits: sandbox.limits } : {}),
      ...(confinement?.extra ? { readOnly: confinement.extra.readOnly, env: confinement.extra.env } : {}),
    });
    return names.map((n) => redactedTool(factories[n]!(cwd), secrets));
  }
  if (sandbox?.mode === "broken")
    throw new Error("createWorkingTools: the sandbox is broken; refuse the Turn first");
  const factories: Record<string, (cwd: string) => AgentTool> = {
    read: (c) => pi.createReadTool(c) as unknown as AgentTool,
    // pi's default mkdir is the recursive one, which can spin forever (see working-directory.ts).
    write: (c) =>
      pi.createWriteTool(c, {
        operations: { writeFile: (p, text) => writeFile(p, text, "utf-8"), mkdir: makeDirectories },
      }) as unknown as AgentTool,
    edit: (c) => pi.createEditTool(c) as unknown as AgentTool,
    // pi's env is the Harness's own (process.env and pi's bin dir on PATH): scrubbed per spawn.
    bash: (c) =>
      pi.createBashTool(c, {
        spawnHook: (spawn) => ({ ...spawn, env: scrubEnvironment(spawn.env, secrets) }),
      }) as unknown as AgentTool,
    grep: (c) => pi.createGrepTool(c) as unknown as AgentTool,
    find: (c) => pi.createFindTool(c) as unknown as AgentTool,
    ls: (c) => pi.createLsTool(c) as unknown as AgentTool,
  };
  return names.map((n) => redactedTool(factories[n]!(cwd), secrets));
}

/**
 * `tool` whose results (final and partial: text parts and details) and thrown messages pass
 * through `secrets` first. Images are passed as they are.
 */
export function redactedTool(tool: AgentTool, secrets: Redactor): AgentTool {
  const redactResult = (r: AgentToolResult<unknown>): AgentToolResult<unknown> => ({
    ...r,
    content: r.content.map((c) => (c.type === "text" ? { ...c, text: secrets.redact(c.text) } : c)),
    details: secrets.redactValue(r.details),
  });
  return {
    ...tool,
    execute: async (toolCallId, params, signal, onUpdate) => {
      try {
        const result = await tool.execute(
          toolCallId,
          params,
          signal,
          onUpdate && ((partial) => onUpdate(redactResult(partial))),
        );
        return redactResult(result);
      } catch (err) {
        throw new Error(secrets.redact(err instanceof Error ? err.message : String(err)));
      }
    },
  };
}

/** The path argument a file tool acts on, if any (bash has none). */
export function pathArgument(name: string, args: unknown): string | undefined {
  // An MCP tool's `path` is its server's to interpret (its own root), not the Worktree's.
  if (name === "bash" || name.startsWith("mcp__") || typeof args !== "object" || args === null)
    return undefined;
  const p = (args as { path?: unknown }).path;
  return typeof p === "string" ? p : undefined;
}

/** bash with the default timeout applied when the model set none. */
export function withBashTimeout(name: string, args: unknown): unknown {
  if (name !== "bash" || typeof args !== "object" || args === null) return args;
  const a = args as { timeout?: unknown };
  return typeof a.timeout === "number" && a.timeout > 0 ? args : { ...a, timeout: BASH_TIMEOUT_S };
}
