import { mkdir, stat } from "node:fs/promises";
import { posix } from "node:path";

/**
 * A Turn's working directory (§5.2): refused at admission when it names a pseudo-filesystem,
 * created on the seat's first Submission one component at a time. `mkdir(p, { recursive: true })`
 * never runs on a cwd: Node 20's recursive mkdir loops forever on some paths (under /proc it
 * spins at 100% CPU and never settles), and a symlink can lead any path there.
 * @see SPEC §5.2, §7.1; ADR-0153
 */

/** Trees that hold kernel views, never a workspace. */
const PSEUDO_ROOTS = ["/proc", "/sys", "/dev"] as const;

/**
 * Why `cwd` cannot be a working directory, judged from its text alone; `undefined` when it may
 * be one. An absolute path is assumed (the Submission schema checks that first).
 * @example cwdProblem("/proc/self/x") // "it is under /proc, a pseudo-filesystem"
 */
export function cwdProblem(cwd: string): string | undefined {
  if (cwd.includes("\0")) return "it contains a NUL byte";
  const normal = posix.normalize(cwd);
  for (const root of PSEUDO_ROOTS) {
    if (normal === root || normal.startsWith(`${root}/`)) return `it is under ${root}, a pseudo-filesystem`;
  }
  return undefined;
}

/** The outcome of creating a working directory: never a throw. */
export type CreateResult = { kind: "ready" } | { kind: "failed"; message: string };

/**
 * Creates `dir` and every missing parent with one non-recursive `mkdir` per component (an
 * existing component is fine). Each step is one system call, so a path that cannot be created
 * fails promptly. Also the write tool's `mkdir` (pi's default is the recursive one).
 * @throws Error naming the component that could not be created and the errno code.
 */
export async function makeDirectories(dir: string): Promise<void> {
  const parts = posix.normalize(dir).split("/").filter(Boolean);
  let at = "";
  for (const part of parts) {
    at = `${at}/${part}`;
    try {
      await mkdir(at);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "EEXIST") throw new Error(`cannot create \`${at}\`: ${code ?? String(err)}`);
    }
  }
}

/**
 * Creates a Turn's working directory ({@link makeDirectories}) and checks it is a directory.
 * Refuses a pseudo-filesystem path even if admission let it through.
 */
export async function createWorkingDirectory(cwd: string): Promise<CreateResult> {
  const problem = cwdProblem(cwd);
  if (problem) return { kind: "failed", message: `cwd \`${cwd}\` cannot be a working directory: ${problem}` };
  try {
    await makeDirectories(cwd);
    if ((await stat(cwd)).isDirectory()) return { kind: "ready" };
    return { kind: "failed", message: `cwd \`${cwd}\` exists and is not a directory` };
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
    return { kind: "failed", message: `cwd \`${cwd}\` cannot be created: ${why}` };
  }
}
