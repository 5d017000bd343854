/**
 * The operations pi-coding-agent's Working tools take (`createReadTool(cwd, { operations })`
 * and the like), backed by the run's sandbox: the file tools by {@link confinedFiles}, bash and
 * find's glob by {@link runTool}. Typed structurally (no import of pi): the Harness adapter passes
 * each object to the matching pi factory; the README's table says which goes where.
 */
import { type ConfinedFiles, confinedFiles } from "./confined-files.js";
import { runTool } from "./run-tool.js";
import type { SandboxMounts, SandboxNetwork, SandboxUser, ToolLimits } from "./spec.js";

/** What every tool of one run shares. */
export interface RunSandbox extends SandboxMounts {
  /** The tools' environment, already scrubbed by the caller (ADR-0158). */
  env: Readonly<Record<string, string | undefined>>;
  network?: SandboxNetwork;
  user?: SandboxUser;
  limits?: Partial<ToolLimits>;
}

/** pi's BashOperations.exec, in the run's sandbox (`bash -c <command>`). */
export interface SandboxBashOperations {
  exec(
    command: string,
    cwd: string,
    options: {
      onData: (data: Buffer) => void;
      signal?: AbortSignal;
      timeout?: number;
      env?: NodeJS.ProcessEnv;
    },
  ): Promise<{ exitCode: number | null }>;
}

/** Everything the seven Working tools need, for one run. */
export interface RunToolOperations {
  files: ConfinedFiles;
  read: Pick<ConfinedFiles, "readFile" | "access"> & {
    detectImageMimeType(path: string): Promise<string | null>;
  };
  write: Pick<ConfinedFiles, "writeFile" | "mkdir">;
  edit: Pick<ConfinedFiles, "readFile" | "writeFile" | "access">;
  ls: Pick<ConfinedFiles, "exists" | "stat" | "readdir">;
  grep: { isDirectory(path: string): Promise<boolean>; readFile(path: string): Promise<string> };
  find: {
    exists(path: string): Promise<boolean>;
    glob(pattern: string, cwd: string, options: { ignore: string[]; limit: number }): Promise<string[]>;
  };
  bash: SandboxBashOperations;
}

/**
 * pi's bash `exec` contract: resolve `{ exitCode }` on exit, reject `"aborted"` on abort and
 * `"timeout:<s>"` when pi's own timeout passes (its messages then read as before); a sandbox
 * limit appends its sentence to the output so the model reads why.
 */
function bashOperations(run: RunSandbox): SandboxBashOperations {
  return {
    async exec(command, cwd, { onData, signal, timeout, env }) {
      const wallMs = timeout !== undefined && timeout > 0 ? timeout * 1000 : undefined;
      const limits = { ...run.limits, ...(wallMs ? { wallMs } : {}) };
      const result = await runTool({
        ...run,
        ...(env ? { env } : {}),
        cwd,
        argv: ["bash", "-c", command],
        limits,
        onData,
        ...(signal ? { signal } : {}),
      });
      if (result.aborted) throw new Error("aborted");
      if (result.limit === "wall-time" && wallMs) throw new Error(`timeout:${timeout}`);
      if (result.limit) onData(Buffer.from(`\n${result.message}\n`));
      return { exitCode: result.exitCode };
    },
  };
}

/** find's glob: `fd` inside the sandbox, read-only, no network; absolute paths back. */
function globOperation(run: RunSandbox, files: ConfinedFiles): RunToolOperations["find"]["glob"] {
  return async (pattern, cwd, { ignore, limit }) => {
    const searchDir = await files.realPathInside(cwd);
    const args = ["--glob", "--color=never", "--hidden", "--absolute-path", "--max-results", String(limit)];
    for (const i of ignore) args.push("--exclude", i.replace(/^\*\*\//, "").replace(/\/\*\*$/, ""));
    args.push("--", pattern, searchDir);
    const result = await runTool({
      ...run,
      access: "read",
      network: "none",
      cwd: run.root,
      argv: [
        "sh",
        "-c",
        'if command -v fd >/dev/null; then exec fd "$@"; else exec fdfind "$@"; fi',
        "fd",
        ...args,
      ],
    });
    if (result.exitCode !== 0) throw new Error(`find failed: ${result.output.toString("utf8").trim()}`);
    return result.output
      .toString("utf8")
      .split("\n")
      .filter((l) => l !== "");
  };
}

/** The image types pi's read tool attaches, by their first bytes (read through the confinement). */
export function sniffImageMimeType(head: Buffer): string | null {
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return "image/png";
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "image/jpeg";
  if (head.subarray(0, 4).toString("latin1") === "GIF8") return "image/gif";
  if (
    head.subarray(0, 4).toString("latin1") === "RIFF" &&
    head.subarray(8, 12).toString("latin1") === "WEBP"
  ) {
    return "image/webp";
  }
  return null;
}

/** The operations of every Working tool of one run (see the README for the pi mapping). */
export async function runToolOperations(run: RunSandbox): Promise<RunToolOperations> {
  const files = await confinedFiles(run.root, run.access, run.user);
  // bash and find bind the root's real path as the file tools saw it; a later swap is refused (ADR-0227).
  const pinned: RunSandbox = { ...run, realRoot: run.realRoot ?? files.realRoot };
  return {
    files,
    read: {
      readFile: files.readFile,
      access: files.access,
      detectImageMimeType: async (p) => sniffImageMimeType((await files.readFile(p)).subarray(0, 16)),
    },
    write: { writeFile: files.writeFile, mkdir: files.mkdir },
    edit: { readFile: files.readFile, writeFile: files.writeFile, access: files.access },
    ls: { exists: files.exists, stat: files.stat, readdir: files.readdir },
    grep: {
      isDirectory: files.isDirectory,
      readFile: async (p) => (await files.readFile(p)).toString("utf8"),
    },
    find: { exists: files.exists, glob: globOperation(pinned, files) },
    bash: bashOperations(pinned),
  };
}
