/**
 * What `jr2 run --follow` and `jr2 follow` exit with (ADR-0062): 0 only when the run
 * succeeded, so a script can `jr2 run review --follow && deploy`.
 * @see README "Exit codes"
 */
import type { RunOutcome, RunStatus } from "@jr2/wire";

/** The exit codes, by what they mean. */
export const EXIT = {
  succeeded: 0,
  /** The run reached a final state declaring `meta: { outcome: "failed" }`. */
  failed: 1,
  /** The CLI could not do what was asked: a usage or config error, a refused request, no Orchestrator. */
  usage: 2,
  /** An unrouted `agent.fault` or a Machine error ended the run. */
  faulted: 3,
  cancelled: 4,
  /** The run's Machine changed shape since it was saved (§8): not restored, not settled. */
  drifted: 5,
  /** The feed ended while the run still ran (the Orchestrator stopped). */
  notSettled: 6,
} as const;

/** The exit code for a run last seen with `status` and `outcome`. */
export function exitCodeOf(status: RunStatus, outcome: RunOutcome | undefined): number {
  if (status === "drifted") return EXIT.drifted;
  if (status === "running") return EXIT.notSettled;
  // A blob from before outcomes (ADR-0062) has none: its status says as much as is known.
  const ended = outcome ?? (status === "done" ? "succeeded" : status);
  return EXIT[ended];
}

/** Marks `error` to exit with `code` (main prints it as any error, then exits with it). */
export function withExitCode(error: unknown, code: number): unknown {
  if (error instanceof Error) Object.assign(error, { exitCode: code });
  return error;
}
