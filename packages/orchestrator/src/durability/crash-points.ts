/**
 * Test-only crash points (the crash harness, issue 6): with `JR2_CRASH_AT=<phase>` set, the
 * process SIGKILLs itself the first time it reaches that exact point, so a restore can be
 * tested from each window that matters. `JR2_CRASH_AT=<phase>:<n>` kills at the n-th time
 * (1-based). Unset (every deployment): each call is one string compare.
 * @see SPEC §5.4 (the admit-sent window), §4.3 (pick-delivered), §8
 */
import { writeSync } from "node:fs";

/** The phases the crash harness kills at. */
export const CRASH_PHASES = ["admit-sent", "ledgered", "pick-delivered", "gate-open", "timer-armed"] as const;
export type CrashPhase = (typeof CRASH_PHASES)[number];

/**
 * Crash points of the operator controls (ADR-0270), killed at by their integration tests, not
 * by the crash harness's trials (a trial never forks): `fork-committed` — a fork's run row,
 * first version and `forked-from` entry committed, nothing else done yet.
 */
export const CONTROL_CRASH_PHASES = ["fork-committed"] as const;
export type ControlCrashPhase = (typeof CONTROL_CRASH_PHASES)[number];

const [wanted, nth] = (process.env.JR2_CRASH_AT ?? "").split(":");
let remaining = nth ? Math.max(1, Number(nth) || 1) : 1;

const flushes: Array<() => void> = [];

/** Registers a synchronous flush (the logger's buffer) run just before a crash point kills. */
export function onCrash(flush: () => void): void {
  flushes.push(flush);
}

/**
 * Marks reaching `phase`: when it is the `JR2_CRASH_AT` phase (and its count is reached),
 * writes `jr2 crash-point <phase>` to stderr synchronously and SIGKILLs this very process
 * (no cleanup, no flush: what a power cut leaves).
 */
export function crashPoint(phase: CrashPhase | ControlCrashPhase): void {
  if (wanted !== phase) return;
  if (--remaining > 0) return;
  for (const flush of flushes) {
    try {
      flush();
    } catch {
      // a log line lost is no reason not to crash
    }
  }
  writeSync(2, `jr2 crash-point ${phase}\n`);
  process.kill(process.pid, "SIGKILL");
}
