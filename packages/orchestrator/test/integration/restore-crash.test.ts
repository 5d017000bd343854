/**
 * The crash harness in CI, bounded (one trial per kill point: at most 12, within 4 minutes on an
 * idle machine): every phase of `JR2_CRASH_AT` (admit-sent, ledgered, pick-delivered, gate-open,
 * timer-armed), a random Orchestrator kill, a Harness kill and a model-endpoint kill (`JR2_CRASH_ENDPOINT=0` leaves it out),
 * each at least once, on
 * the real Orchestrator and Harness with model-sim. `pnpm crash` runs many more trials
 * (`JR2_CRASH_TRIALS`, default 60). Needs the built binaries (`pnpm build`). The per-phase
 * invariants are in crash-trials.ts's header.
 * @see SPEC §8; issue 6 "Done when"; issue 16 item 8
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { missingBinaries } from "../../../conformance/src/index.js";
import { killPoints, runCrashTrials } from "../crash/crash-trials.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../../../../examples/workflows/", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const points = killPoints();
const trials = Number(process.env.JR2_CRASH_TRIALS ?? points.length);

describe.skipIf(missing.length > 0)("the Orchestrator killed at each phase and restarted (§8)", () => {
  it(
    `${trials} trials of review and triage (${points.join(", ")}): no pick lost or delivered twice, no prompt re-sent outside the admit-sent window or on an old conversation, every run ends as uninterrupted`,
    async () => {
      const report = await runCrashTrials({
        repoRoot,
        workflowsDir,
        trials,
        ...(process.env.JR2_CRASH_ONLY ? { only: process.env.JR2_CRASH_ONLY.split(",") as never } : {}),
        log: (line) => process.stdout.write(`[crash] ${line}\n`),
      });
      const { results: _results, ...summary } = report;
      process.stdout.write(`[crash] report ${JSON.stringify(summary, null, 2)}\n`);
      expect(report.violations).toEqual([]);
      if (!process.env.JR2_CRASH_ONLY)
        for (const phase of points) expect(report.killsPerPhase[phase]).toBeGreaterThan(0);
      expect(report.trials).toBe(trials);
    },
    30 * 60_000,
  );
});
