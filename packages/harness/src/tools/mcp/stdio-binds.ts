import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";

/**
 * The host paths a stdio MCP server's sandbox binds read-only (ADR-0235): the absolute paths
 * its command and arguments name — its own install (`/opt/mcp/server.js`; a path inside a
 * `node_modules` binds that `node_modules`, where pnpm's links resolve) or a directory it
 * serves (`/data`). A bind must not hand the server what the Harness keeps from every tool:
 * `/` itself, the work root (every run's Worktree and repository) other than this run's own
 * Worktree, the Harness's data directory, and the credential files the operator names. A path
 * that is, holds or lies inside one of those is refused with the reason: the server is down.
 */

/** What may not be bound, from the Harness's environment; `own` is this run's Worktree. */
export interface BindGuard {
  protectedPaths: string[];
  own: string | undefined;
}

/** The guard for `environment` (`JR2_WORK_ROOT` defaults to `/work`, as the workspace reads it). */
export function bindGuard(
  environment: Readonly<Record<string, string | undefined>>,
  own: string | undefined,
): BindGuard {
  const named = [
    environment.JR2_WORK_ROOT?.trim() || "/work",
    environment.JR2_HARNESS_DATA_DIR,
    environment.JR2_GIT_TOKEN_FILE,
    environment.JR2_GIT_SSH_KEY_FILE,
    environment.JR2_MODELS?.startsWith("@") ? environment.JR2_MODELS.slice(1) : undefined,
  ];
  const protectedPaths = named
    .map((p) => p?.trim())
    .filter((p): p is string => !!p && isAbsolute(p))
    .map(real);
  return { protectedPaths, own: own ? real(own) : undefined };
}

/**
 * The read-only binds for `argv`, or the reason one is refused.
 * @example stdioBinds(["/usr/bin/node", "/opt/mcp/index.js"], guard) // { binds: [...] }
 */
export function stdioBinds(
  argv: readonly string[],
  guard: BindGuard,
): { binds: string[] } | { refused: string } {
  const out = new Set<string>();
  for (const a of argv) {
    if (!isAbsolute(a) || !existsSync(a)) continue;
    for (const p of [resolve(a), real(a)]) {
      const i = p.indexOf("/node_modules/");
      const bind = i >= 0 ? p.slice(0, i + "/node_modules".length) : p;
      const why = bindProblem(bind, guard);
      if (why)
        return { refused: `argument \`${a}\` would bind \`${bind}\` into the server's sandbox: ${why}` };
      out.add(bind);
    }
  }
  return { binds: [...out] };
}

function bindProblem(path: string, guard: BindGuard): string | undefined {
  if (path === "/") return "that is the whole host";
  if (guard.own && within(path, guard.own)) return undefined;
  for (const p of guard.protectedPaths) {
    if (within(path, p)) return `it lies inside \`${p}\`, which the Harness keeps from servers`;
    if (within(p, path)) return `it holds \`${p}\`, which the Harness keeps from servers`;
  }
  return undefined;
}

/** True when `path` is `dir` or inside it. */
function within(path: string, dir: string): boolean {
  const r = relative(dir, path);
  return r === "" || (!r.startsWith("..") && !isAbsolute(r));
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}
