/**
 * Per-tool-process limits (issue 26 item 3): rlimits set by util-linux's `prlimit` inside the
 * sandbox (soft = hard, so the tool cannot raise them; CPU's hard limit is one second above), wall time and output size enforced by
 * runTool, and the message the model reads when one ends its command.
 */
import type { LimitHit, ToolLimits } from "./spec.js";

/** Defaults: generous for builds and test runs, small enough to end a runaway. */
export const DEFAULT_TOOL_LIMITS: Readonly<ToolLimits> = {
  cpuSeconds: 120,
  fileBytes: 256 * 1024 * 1024,
  processes: 256,
  wallMs: 120_000,
  outputBytes: 16 * 1024 * 1024,
};

/** `prlimit` and its options, to put before a tool's argv inside the sandbox. */
export function prlimitPrefix(l: ToolLimits): string[] {
  const pair = (n: number) => `${Math.max(1, Math.floor(n))}:${Math.max(1, Math.floor(n))}`;
  return [
    "prlimit",
    // Hard one second above soft: at the soft limit the kernel sends SIGXCPU (named below);
    // soft = hard would send SIGKILL, indistinguishable from any other kill.
    `--cpu=${Math.max(1, Math.floor(l.cpuSeconds))}:${Math.max(1, Math.floor(l.cpuSeconds)) + 1}`,
    `--fsize=${pair(l.fileBytes)}`,
    `--nproc=${pair(l.processes)}`,
    "--",
  ];
}

/** 128 + SIGXCPU / SIGXFSZ: how bwrap (and bash) report a process the kernel ended for a limit. */
const EXIT_CPU = 128 + 24;
const EXIT_FSIZE = 128 + 25;
/** What bash and coreutils print when fork fails under RLIMIT_NPROC. */
const FORK_REFUSED = /fork: (retry: )?Resource temporarily unavailable|Cannot fork|fork failed/i;

/** Which rlimit ended a process that exited with `exitCode` after printing `output`, if one did. */
export function rlimitHit(exitCode: number | null, output: string): LimitHit | undefined {
  if (exitCode === EXIT_CPU || /CPU time limit exceeded/.test(output)) return "cpu";
  if (exitCode === EXIT_FSIZE || /File size limit exceeded/.test(output)) return "file-size";
  if (FORK_REFUSED.test(output)) return "processes";
  return undefined;
}

/** The sentence the model reads: which limit, its value, what to do instead. */
export function limitMessage(hit: LimitHit, l: ToolLimits): string {
  switch (hit) {
    case "cpu":
      return `jr2 sandbox: the command used its ${l.cpuSeconds} s of CPU time (RLIMIT_CPU) and was ended; make it do less work per call`;
    case "file-size":
      return `jr2 sandbox: a file reached the ${l.fileBytes} byte limit (RLIMIT_FSIZE) and the write was refused; write smaller files`;
    case "processes":
      return `jr2 sandbox: the ${l.processes} process limit (RLIMIT_NPROC) was reached and fork was refused; start fewer processes`;
    case "wall-time":
      return `jr2 sandbox: the command ran past its ${Math.round(l.wallMs / 1000)} s wall time and every process of it was killed; run shorter steps or raise the timeout`;
    case "output":
      return `jr2 sandbox: the command printed more than ${l.outputBytes} bytes and was killed; redirect output to a file and read parts of it`;
  }
}
