import { spawn } from "node:child_process";
import { Jr2Error } from "@jr2/wire";
import { type GitPlace, gitArgv, gitCwd, gitEnvironment } from "./git-command.js";

/** What {@link gitBounded} read: at most `maxBytes + 1` bytes of stdout, and whether git was stopped. */
export interface BoundedOutput {
  /** The first bytes git wrote (more than `maxBytes` only by the one byte that tells a cut). */
  stdout: Buffer;
  /** Whether git wrote more than `maxBytes` and was stopped (SIGKILL) before it finished. */
  stopped: boolean;
}

/**
 * Runs a hardened git (same argv and environment as `git()`) and reads at most `maxBytes + 1`
 * bytes of its stdout: past that, git is killed and `stopped` is true (ADR-0212: a 72 MB
 * added file made `git diff` overflow Node's maxBuffer and fail the reviewer's Turn). Memory is
 * bounded by `maxBytes` whatever git would print.
 * @throws Jr2Error `JR2_ERR_WORKSPACE_GIT_FAILED` when git exits non-zero before the bound, or
 *   does not finish within `timeoutMs` (default 120 000)
 */
export function gitBounded(
  place: GitPlace,
  args: readonly string[],
  maxBytes: number,
  timeoutMs = 120_000,
): Promise<BoundedOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", gitArgv(place, args), {
      cwd: gitCwd(place),
      env: gitEnvironment(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let stopped = false;
    let timedOut = false;
    let stderr = "";
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => {
      if (stopped) return;
      const room = maxBytes + 1 - size;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      size += Math.min(chunk.length, room);
      if (size > maxBytes) {
        stopped = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString("utf8");
    });
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(
        new Jr2Error(
          "JR2_ERR_WORKSPACE_GIT_FAILED",
          { command: `git ${args[0] ?? ""}`, exit: -1, stderr: error.message },
          error,
        ),
      );
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (stopped || (code === 0 && !timedOut)) {
        resolve({ stdout: Buffer.concat(chunks), stopped });
        return;
      }
      reject(
        new Jr2Error("JR2_ERR_WORKSPACE_GIT_FAILED", {
          command: `git ${args[0] ?? ""}`,
          exit: timedOut ? "killed (time limit)" : (code ?? -1),
          stderr: stderr.trim().slice(0, 600) || "(no output)",
        }),
      );
    });
  });
}
