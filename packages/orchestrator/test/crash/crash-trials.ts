/**
 * The crash harness (issue 6, issue 16 item 8, SPEC §8): the real Orchestrator and Harness with
 * model-sim run `review` and `triage` over and over. In each trial one process is SIGKILLed:
 * - the Orchestrator at an exact phase (`JR2_CRASH_AT`: it kills itself there) or at a random
 *   moment (`random`), then restarted on the same data folder;
 * - the Harness (`harness-kill`) just after the run's next model request, then restarted on its
 *   data dir: it rebuilds its conversations from its store;
 * - the model endpoint (`endpoint-kill`, model-sim) just after the run's next model request,
 *   started again on the same port 0.4 s later; the Harness's provider retries (issue 10) carry
 *   the request over the gap. `JR2_CRASH_ENDPOINT=0` leaves this phase out.
 * Then the run is driven to its end. Invariants, checked from the endpoint's byte-exact request
 * log, the Orchestrator's logs and the store, not only from final states:
 * - every phase: each tool-call id is delivered at most once and every answered pick is stored
 *   (picks exactly once); the run ends as the uninterrupted run does; no Turn stays registered;
 *   a Turn's task prompt reaches the model once (twice only after an Orchestrator kill in the
 *   admit-sent window or at random); a kill before the run's first save leaves no run and is
 *   exempt from the comparison (nothing was promised).
 * - after a Harness kill (it keeps its state in `JR2_HARNESS_DATA_DIR`, ADR-0175): a continued
 *   conversation's first request after the restart extends the last request before it byte for
 *   byte; nothing is doubled (the Turn cut is admitted once more on its kept conversation).
 * - after an endpoint kill: a model request may repeat only with identical bytes (same messages
 *   ⇒ same bytes; an earlier request's history is never sent again with anything but the
 *   model's answer next).
 * Entry points: `pnpm crash` (many trials) and test/integration/restore-crash.test.ts (CI).
 * This file is the runner (the stack, the plan, the report); one trial's phases: crash-trial.ts.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, type Stack, startStack } from "../../../conformance/src/index.js";
import { CRASH_PHASES } from "../../src/durability/crash-points.js";
import {
  driveToEnd,
  endStateViolations,
  type KillAt,
  logLines,
  OTHER_KILLS,
  reaches,
  startRun,
  type TrialResult,
  trial,
  WORKFLOWS,
  type Workflow,
} from "./crash-trial.js";
import { startEndpointSim } from "./endpoint-sim.js";
import { conversationOpenings } from "./invariants.js";
import { trialLogs } from "./trial-logs.js";

export { endStateViolations, type KillAt, OTHER_KILLS, type TrialResult } from "./crash-trial.js";

/** Every kill point; `JR2_CRASH_ENDPOINT=0` leaves the endpoint kill out. */
export function killPoints(env: NodeJS.ProcessEnv = process.env): KillAt[] {
  return [
    ...CRASH_PHASES,
    "random",
    "harness-kill",
    ...(env.JR2_CRASH_ENDPOINT === "0" ? [] : (["endpoint-kill"] as const)),
  ];
}

/** The report of a series of trials. */
export interface CrashReport {
  trials: number;
  killsPerPhase: Record<KillAt, number>;
  notReached: Record<KillAt, number>;
  /** Prompt duplicates by the kill that preceded them (only admit-sent/random may have any). */
  duplicatesByWindow: Record<KillAt, number>;
  /** Stored answers served to a repeated tool-call id (the Harness re-sent after a kill). */
  repeatsServed: number;
  violations: string[];
  results: TrialResult[];
  /** Where each violating trial's logs were kept (trial-logs.ts). */
  logsDir?: string;
  /** Trials planned but not started: `deadlineAt` came first. */
  notStarted?: number;
}

/**
 * Runs `trials` trials (phases round-robin, workflows alternating) and returns the report.
 * `random` in the rotation kills at a random moment 0–`randomMaxMs` after the run starts.
 */
export async function runCrashTrials(options: {
  repoRoot: string;
  workflowsDir: string;
  trials: number;
  randomMaxMs?: number;
  log?: (line: string) => void;
  seed?: number;
  /** Only these kill points (default: every phase and random). */
  only?: readonly KillAt[];
  /** `JR2_STORE_URL` of the Orchestrator: a PostgreSQL store instead of SQLite (issue 15). */
  storeUrl?: string;
  /** No trial starts after this (`Date.now()` ms): the rest are counted `notStarted` (issue 24 item 7). */
  deadlineAt?: number;
  /** Called once the stack runs, with its stop (idempotent): an `afterAll` stops it on a timeout. */
  onStarted?: (stop: () => Promise<void>) => void;
}): Promise<CrashReport> {
  const say = options.log ?? (() => {});
  const dataDir = mkdtempSync(join(tmpdir(), "jr2-crash-"));
  let rand = options.seed ?? 42;
  const random = () => {
    rand = (rand * 1103515245 + 12345) % 2 ** 31;
    return rand / 2 ** 31;
  };
  // Our own model endpoint, so it can be killed and started again on the same port.
  const sim = await startEndpointSim(options.repoRoot, await freePort());
  const baseUrl = `${sim.url}/v1`;
  let stack: Stack;
  try {
    stack = await startStack("process", {
      repoRoot: options.repoRoot,
      workflowsDir: options.workflowsDir,
      // The Harness keeps its state beside (a restart rebuilds its conversations, ADR-0175).
      harnessEnv: { JR2_HARNESS_DATA_DIR: join(dataDir, "harness") },
      orchestratorEnv: {
        JR2_DATA_DIR: dataDir,
        // A restarted instance keeps its id (its port), so it adopts its own leases at once.
        ...(options.storeUrl
          ? {
              JR2_STORE_URL: options.storeUrl,
              JR2_LEASE_MS: "2000",
              JR2_PEER_KEY: randomBytes(32).toString("hex"),
            }
          : {}),
      },
      models: () => ({
        coder: { baseUrl, id: "worker:1", contextWindow: 32768, maxTokens: 1024 },
        reviewer: { baseUrl, id: "script:request_changes,approve", contextWindow: 32768, maxTokens: 1024 },
        triager: { baseUrl, id: "obedient", contextWindow: 32768, maxTokens: 1024 },
      }),
    });
  } catch (error) {
    await sim.close();
    throw error;
  }
  let stopped: Promise<void> | undefined;
  const stopAll = () => {
    stopped ??= (async () => {
      await stack.close().catch(() => {});
      await sim.close().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    })();
    return stopped;
  };
  options.onStarted?.(stopAll);
  const logs = trialLogs({
    orchestratorLog: () => stack.orchestratorLog(),
    harnessLog: () => stack.harnessLog(),
    requests: () => sim.requests(),
  });
  const zero = () =>
    Object.fromEntries([...CRASH_PHASES, "random", ...OTHER_KILLS].map((p) => [p, 0])) as Record<
      KillAt,
      number
    >;
  const report: CrashReport = {
    trials: 0,
    killsPerPhase: zero(),
    notReached: zero(),
    duplicatesByWindow: zero(),
    repeatsServed: 0,
    violations: [],
    results: [],
    logsDir: logs.dir,
  };
  try {
    // The uninterrupted runs: the final state every interrupted one must reach.
    const baseline = new Map<Workflow, unknown>();
    const openings = new Map<Workflow, Map<string, { plain: number; renewed: number }>>();
    for (const workflow of Object.keys(WORKFLOWS) as Workflow[]) {
      const seqStart = (await sim.requests()).length;
      const runId = await startRun(stack, workflow);
      baseline.set(workflow, await driveToEnd(stack, workflow, runId!));
      openings.set(workflow, conversationOpenings((await sim.requests()).slice(seqStart)));
      say(`baseline ${workflow}: ${JSON.stringify(baseline.get(workflow))}`);
    }
    const rotation: KillAt[] = options.only?.length ? [...options.only] : killPoints();
    const plan: Array<{ workflow: Workflow; killAt: KillAt }> = [];
    for (let i = 0; plan.length < options.trials; i++) {
      const killAt = rotation[i % rotation.length]!;
      const workflow: Workflow = Math.floor(i / rotation.length) % 2 === 0 ? "review" : "triage";
      plan.push({ workflow: reaches(workflow, killAt) ? workflow : "triage", killAt });
    }
    for (const [i, { workflow, killAt }] of plan.entries()) {
      if (options.deadlineAt !== undefined && Date.now() > options.deadlineAt) {
        report.notStarted = plan.length - i;
        say(`stopping near the timeout: ${report.notStarted} of ${plan.length} trials not started`);
        break;
      }
      const mark = await logs.mark();
      const result = await trial(stack, {
        workflow,
        killAt,
        dataDir,
        ...(options.storeUrl ? { storeUrl: options.storeUrl } : {}),
        random,
        randomMaxMs: options.randomMaxMs ?? 1500,
        sim,
        openings: openings.get(workflow)!,
      });
      result.violations.push(...endStateViolations(result, baseline.get(workflow)));
      report.trials++;
      if (result.killed) report.killsPerPhase[killAt]++;
      else report.notReached[killAt]++;
      report.duplicatesByWindow[killAt] += result.duplicates;
      report.violations.push(...result.violations.map((v) => `${workflow} @ ${killAt}:${result.nth}: ${v}`));
      report.results.push(result);
      if (result.violations.length > 0)
        say(
          `trial ${report.trials}'s logs kept: ${await logs.keep(report.trials, mark, result.violations)}.*`,
        );
      say(
        `trial ${report.trials}: ${workflow} kill@${killAt}:${result.nth} ${result.killed ? "killed" : "not reached"} → ${JSON.stringify(result.finalValue)}${result.duplicates ? ` dup=${result.duplicates}` : ""}${result.violations.length ? ` VIOLATIONS ${result.violations.join("; ")}` : ""}`,
      );
    }
    report.repeatsServed = logLines(stack.orchestratorLog()).filter(
      (l) => l.msg === "pick repeated: the stored answer",
    ).length;
    return report;
  } finally {
    await stopAll();
  }
}
