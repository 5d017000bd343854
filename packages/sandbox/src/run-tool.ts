/**
 * runTool: one bounded tool process in the run's sandbox (issue 26 items 1, 3, 5).
 */
import { DEFAULT_TOOL_LIMITS, limitMessage, prlimitPrefix, rlimitHit } from "./limits.js";
import { spawnSandboxed } from "./sandbox-process.js";
import type { LimitHit, ToolLimits, ToolResult, ToolSpec } from "./spec.js";

/**
 * Runs `spec.argv` (e.g. `["bash", "-c", command]`) in a fresh sandbox of the run: the run's
 * directory only, a read-only system, private /tmp, HOME and /proc, its own PID namespace, the
 * given environment, no network unless `spec.network` says so, as a non-root uid; under
 * RLIMIT_CPU, RLIMIT_FSIZE and RLIMIT_NPROC (prlimit), a wall-time timer and an output cap.
 * A limit hit, the wall time or the output cap ends it; `limit` names which and `message`
 * says so for the model. `onData` streams each chunk as it comes; `signal` kills the sandbox.
 * Resolves once every process of the sandbox is gone (the PID namespace dies with bwrap).
 * Rejects only when bwrap cannot be started (probe first: {@link probeSandbox}).
 */
export function runTool(spec: ToolSpec): Promise<ToolResult> {
  const limits: ToolLimits = { ...DEFAULT_TOOL_LIMITS, ...spec.limits };
  const child = spawnSandboxed(spec, prlimitPrefix(limits));
  const chunks: Buffer[] = [];
  let size = 0;
  let killedFor: LimitHit | undefined;
  let aborted = false;
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  const onChunk = (chunk: Buffer) => {
    if (killedFor === "output") return;
    const room = limits.outputBytes - size;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    size += kept.length;
    chunks.push(kept);
    if (kept.length > 0) spec.onData?.(kept);
    if (chunk.length > room) {
      killedFor = "output";
      kill();
    }
  };
  child.stdout?.on("data", onChunk);
  child.stderr?.on("data", onChunk);
  const timer = setTimeout(() => {
    killedFor ??= "wall-time";
    kill();
  }, limits.wallMs);
  const onAbort = () => {
    aborted = true;
    kill();
  };
  if (spec.signal?.aborted) onAbort();
  else spec.signal?.addEventListener("abort", onAbort, { once: true });

  return new Promise<ToolResult>((resolve, reject) => {
    child.once("error", (err) => {
      clearTimeout(timer);
      spec.signal?.removeEventListener("abort", onAbort);
      reject(
        new Error(
          `jr2 sandbox: cannot start bwrap: ${err.message}; install bubblewrap (apt-get install bubblewrap)`,
        ),
      );
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      spec.signal?.removeEventListener("abort", onAbort);
      const output = Buffer.concat(chunks);
      const killed = killedFor !== undefined || aborted;
      const limit = killedFor ?? (aborted ? undefined : rlimitHit(code, output.toString("utf8")));
      resolve({
        exitCode: killed ? null : code,
        output,
        ...(limit ? { limit } : {}),
        message: limit ? limitMessage(limit, limits) : "",
        aborted,
      });
    });
  });
}
