import { writeFile } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import type { WorkspaceAccess } from "@jr2/wire";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { makeDirectories } from "./working-directory.js";

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

/**
 * The Working tools for an access level, rooted at `cwd` (pi-coding-agent's own tools).
 * File tools are confined to `cwd` by menu-tools' wrapper (`pathArgument`); bash cannot be
 * confined by path — the container is its boundary (docs/adr/0152).
 * Loaded lazily: pi-coding-agent is large and `workspace: "none"` never needs it.
 * @see SPEC §7.2, §13
 */
export async function createWorkingTools(access: WorkspaceAccess, cwd: string): Promise<AgentTool[]> {
  const names = WORKING_TOOLS_BY_ACCESS[access];
  if (names.length === 0) return [];
  const pi = await import("@mariozechner/pi-coding-agent");
  const factories: Record<string, (cwd: string) => AgentTool> = {
    read: (c) => pi.createReadTool(c) as unknown as AgentTool,
    // pi's default mkdir is the recursive one, which can spin forever (see working-directory.ts).
    write: (c) =>
      pi.createWriteTool(c, {
        operations: { writeFile: (p, text) => writeFile(p, text, "utf-8"), mkdir: makeDirectories },
      }) as unknown as AgentTool,
    edit: (c) => pi.createEditTool(c) as unknown as AgentTool,
    bash: (c) => pi.createBashTool(c) as unknown as AgentTool,
    grep: (c) => pi.createGrepTool(c) as unknown as AgentTool,
    find: (c) => pi.createFindTool(c) as unknown as AgentTool,
    ls: (c) => pi.createLsTool(c) as unknown as AgentTool,
  };
  return names.map((n) => factories[n]!(cwd));
}

/** The path argument a file tool acts on, if any (bash has none). */
export function pathArgument(name: string, args: unknown): string | undefined {
  if (name === "bash" || typeof args !== "object" || args === null) return undefined;
  const p = (args as { path?: unknown }).path;
  return typeof p === "string" ? p : undefined;
}

/** bash with the default timeout applied when the model set none. */
export function withBashTimeout(name: string, args: unknown): unknown {
  if (name !== "bash" || typeof args !== "object" || args === null) return args;
  const a = args as { timeout?: unknown };
  return typeof a.timeout === "number" && a.timeout > 0 ? args : { ...a, timeout: BASH_TIMEOUT_S };
}
