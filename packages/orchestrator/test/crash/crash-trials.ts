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
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import {
  freePort,
  noPromptAdmittedTwice,
  type RecordedRequest,
  type Stack,
  startStack,
} from "../../../conformance/src/index.js";
import { CRASH_PHASES, type CrashPhase } from "../../src/durability/crash-points.js";
import { STORE_FILE } from "../../src/durability/store/sqlite.js";
import { type EndpointSim, startEndpointSim } from "./endpoint-sim.js";
import { conversationOpenings, repeatsWithChangedBytes, requestsExtendAcrossRestart } from "./invariants.js";
import { trialLogs } from "./trial-logs.js";

/** Kills of another process than the Orchestrator (each a phase of the rotation). */
export const OTHER_KILLS = ["harness-kill", "endpoint-kill"] as const;
export type KillAt = CrashPhase | "random" | (typeof OTHER_KILLS)[number];

/** Every kill point; `JR2_CRASH_ENDPOINT=0` leaves the endpoint kill out. */
export function killPoints(env: NodeJS.ProcessEnv = process.env): KillAt[] {
  return [
    ...CRASH_PHASES,
    "random",
    "harness-kill",
    ...(env.JR2_CRASH_ENDPOINT === "0" ? [] : (["endpoint-kill"] as const)),
  ];
}

/** The workflows driven and which phases each can reach (review has no timer). */
const WORKFLOWS = {
  review: { input: { task: "a hello() function in hello.js" }, gates: { merge_gate: "merge" } },
  triage: { input: { report: "the login page is blank" }, gates: { confirm_gate: "confirm" } },
} as const;
type Workflow = keyof typeof WORKFLOWS;

const reaches = (workflow: Workflow, phase: KillAt) => phase !== "timer-armed" || workflow === "triage";

/** One trial's plan and what it saw. */
export interface TrialResult {
  workflow: Workflow;
  killAt: KillAt;
  /** `JR2_CRASH_AT=<phase>:<nth>`: the n-th time the phase is reached. */
  nth: number;
  /** The process died at the phase (or was killed at random). False: the phase never came. */
  killed: boolean;
  /** Killed before the run's first save: no run is left, nothing to compare (nothing was promised). */
  neverStarted?: boolean;
  finalValue: unknown;
  /** Prompts that reached the model twice for one Turn. */
  duplicates: number;
  /** Invariant violations, in words (empty = the trial passed). */
  violations: string[];
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

interface LogLine {
  msg?: string;
  turnId?: string | null;
  runId?: string;
  iid?: string;
  toolCallId?: string;
  delivered?: boolean;
}

/** The JSON log lines, each once (a process killed by a signal can be listed twice by the stack). */
function logLines(text: string): LogLine[] {
  return [...new Set(text.split("\n"))]
    .filter((l) => l.startsWith("{"))
    .map((l) => {
      try {
        return JSON.parse(l) as LogLine;
      } catch {
        return {};
      }
    });
}

async function http(stack: Stack, path: string, init: RequestInit = {}) {
  // A loaded box makes the Orchestrator shed load (ADR-0286: 503 with Retry-After): a person's
  // client waits and asks again, so the harness does too — an unanswered list is not "no run".
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(`${stack.orchestratorUrl}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
      });
      const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
      if (res.status === 503 && body?.code === "JR2_ERR_SERVICE_OVERLOADED" && attempt < 20) {
        await sleep(1000 * Math.min(5, Number(res.headers.get("retry-after") ?? 1) || 1));
        continue;
      }
      return { status: res.status, body };
    } catch {
      return { status: 0, body: null }; // the Orchestrator is down
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

async function startRun(stack: Stack, workflow: Workflow): Promise<string | undefined> {
  const res = await http(stack, `/workflows/${workflow}/runs`, {
    method: "POST",
    body: JSON.stringify({ input: WORKFLOWS[workflow].input }),
  });
  return res.status === 201 ? (res.body?.runId as string) : undefined;
}

/** Answers the run's Gates when they take their event, until the run settles; returns its value. */
async function driveToEnd(
  stack: Stack,
  workflow: Workflow,
  runId: string,
  timeoutMs = 60_000,
): Promise<unknown> {
  const deadline = Date.now() + timeoutMs;
  const gates = WORKFLOWS[workflow].gates as Record<string, string>;
  for (;;) {
    const { status, body } = await http(stack, `/runs/${runId}`);
    if (status === 200 && body) {
      if (body.status !== "running") return { status: body.status, value: body.value };
      for (const gate of (body.gates as Array<{ id: string; acceptsNow: string[] }>) ?? []) {
        const event = gates[gate.id];
        if (event && gate.acceptsNow.includes(event))
          await http(stack, `/runs/${runId}/gates/${gate.id}/events`, {
            method: "POST",
            body: JSON.stringify({ type: event }),
          });
      }
    }
    if (Date.now() > deadline) return { status: "hanging", value: body?.value ?? null };
    await sleep(50);
  }
}

/**
 * The trial's final state against the uninterrupted run's. A run killed before its first save
 * does not exist (`neverStarted`): there is no final state to compare — its own check (a lost
 * run is a violation except after a random kill) is the trial's.
 */
export function endStateViolations(
  result: Pick<TrialResult, "finalValue" | "neverStarted">,
  expected: unknown,
): string[] {
  if (result.neverStarted) return [];
  return JSON.stringify(result.finalValue) === JSON.stringify(expected)
    ? []
    : [`final state ${JSON.stringify(result.finalValue)} ≠ uninterrupted ${JSON.stringify(expected)}`];
}

const isOtherKill = (killAt: KillAt): killAt is (typeof OTHER_KILLS)[number] =>
  (OTHER_KILLS as readonly string[]).includes(killAt);

/**
 * Kills the Harness or the endpoint just after the run's `nth` model request (Gates answered
 * meanwhile); false when the run settled first.
 */
async function killOther(
  stack: Stack,
  plan: { workflow: Workflow; killAt: (typeof OTHER_KILLS)[number]; sim: EndpointSim; random: () => number },
  nth: number,
  seqStart: number,
  before: Set<string>,
): Promise<boolean> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if ((await plan.sim.requests()).length >= seqStart + nth) {
      await sleep(plan.random() * 150);
      if (plan.killAt === "harness-kill") await stack.restartHarness();
      else {
        await plan.sim.kill();
        await sleep(400);
        await plan.sim.start();
      }
      return true;
    }
    const ids = ((await runIds(stack, "may-be-down")) ?? []).filter((id) => !before.has(id));
    const run = ids[0] ? await http(stack, `/runs/${ids[0]}`) : undefined;
    if (run?.body && run.body.status !== "running") return false;
    if (run?.body && ids[0]) await answerGates(stack, plan.workflow, ids[0], run.body);
    await sleep(10);
  }
  return false;
}

/** `<iid> <toolCallId>` of every pick answer stored for `runId`, read from the store itself. */
async function storedPickKeys(
  plan: { dataDir: string; storeUrl?: string },
  runId: string,
): Promise<Set<string>> {
  const sql = "SELECT iid, tool_call_id FROM pick_answers WHERE run_id = ";
  if (plan.storeUrl) {
    const client = new pg.Client(plan.storeUrl);
    await client.connect();
    try {
      const { rows } = await client.query<{ iid: string; tool_call_id: string }>(`${sql}$1`, [runId]);
      return new Set(rows.map((r) => `${r.iid} ${r.tool_call_id}`));
    } finally {
      await client.end();
    }
  }
  const db = new Database(join(plan.dataDir, STORE_FILE), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare<[string], { iid: string; tool_call_id: string }>(`${sql}?`).all(runId);
    return new Set(rows.map((r) => `${r.iid} ${r.tool_call_id}`));
  } finally {
    db.close();
  }
}

async function trial(
  stack: Stack,
  plan: {
    workflow: Workflow;
    killAt: KillAt;
    dataDir: string;
    /** The PostgreSQL store's URL, when the trials run on it (else SQLite in `dataDir`). */
    storeUrl?: string;
    random: () => number;
    randomMaxMs: number;
    sim: EndpointSim;
    /** The uninterrupted run's conversation openings per model. */
    openings: Map<string, { plain: number; renewed: number }>;
  },
): Promise<TrialResult> {
  const { workflow, killAt } = plan;
  // review admits four Turns and answers four picks; triage one of each (plus its wake).
  const maxNth =
    workflow === "review" && ["admit-sent", "ledgered", "pick-delivered", ...OTHER_KILLS].includes(killAt)
      ? 3
      : 1;
  const nth = 1 + Math.floor(plan.random() * maxNth);
  const logStart = stack.orchestratorLog().length;
  const seqStart = (await plan.sim.requests()).length;
  const before = new Set(await runIds(stack));
  let killed = false;
  if (isOtherKill(killAt)) {
    void startRun(stack, workflow);
    killed = await killOther(stack, { ...plan, killAt }, nth, seqStart, before);
  } else {
    await stack.killOrchestrator();
    await stack.startOrchestrator(killAt === "random" ? {} : { JR2_CRASH_AT: `${killAt}:${nth}` });
    void startRun(stack, workflow); // the answer may never come: the process may die first
  }
  if (isOtherKill(killAt)) {
    // The Orchestrator lives on.
  } else if (killAt === "random") {
    await sleep(plan.random() * plan.randomMaxMs);
    await stack.killOrchestrator();
    killed = true;
  } else {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (stack.orchestratorLog().slice(logStart).includes(`jr2 crash-point ${killAt}`)) {
        killed = true;
        break;
      }
      const ids = ((await runIds(stack, "may-be-down")) ?? []).filter((id) => !before.has(id));
      const run = ids[0] ? await http(stack, `/runs/${ids[0]}`) : undefined;
      if (run?.body && run.body.status !== "running") break;
      // Keep the run going up to the phase: Gates answered as a person would.
      if (run?.body && ids[0]) await answerGates(stack, workflow, ids[0], run.body);
      await sleep(30);
    }
    await stack.killOrchestrator();
  }
  if (!isOtherKill(killAt)) await stack.startOrchestrator();
  const runId = (await runIds(stack)).find((id) => !before.has(id));
  const violations: string[] = [];
  if (!runId) {
    // Killed before the run's first save: nothing was promised, nothing may be left running.
    return {
      workflow,
      killAt,
      nth,
      killed,
      neverStarted: true,
      finalValue: { status: "never-started" },
      duplicates: 0,
      violations: killAt === "random" ? [] : ["the run was lost"],
    };
  }
  const finalValue = await driveToEnd(stack, workflow, runId);
  const detail = await http(stack, `/runs/${runId}`);
  if (((detail.body?.turns as unknown[]) ?? []).length > 0)
    violations.push("a Turn is left registered after the run settled");

  // At most one delivery per tool-call id; every pick the model could have been told landed is stored.
  const lines = logLines(stack.orchestratorLog().slice(logStart)).filter((l) => l.runId === runId);
  const delivered = new Map<string, number>();
  for (const l of lines)
    if (l.msg === "pick answered" && l.delivered) {
      const key = `${l.iid} ${l.toolCallId}`;
      delivered.set(key, (delivered.get(key) ?? 0) + 1);
    }
  for (const [key, n] of delivered) if (n > 1) violations.push(`tool call ${key} delivered ${n} times`);
  const stored = await storedPickKeys(plan, runId);
  for (const key of delivered.keys())
    if (!stored.has(key)) violations.push(`answered pick ${key} is not in the restored run's store`);

  // Each Turn's task is admitted once (the Harness's own stream of the conversation: one
  // Submission per admission); twice only after a kill in the admit-sent window.
  // After a Harness kill the Turn cut is admitted on the renewed conversation (a new iid, whose
  // "Turn registered" line is the next Turn's): one more task there, told by the openings rule.
  const admittedTwice = killAt === "admit-sent" || killAt === "random" || killAt === "harness-kill";
  let duplicates = 0;
  const turnsAt = new Map<string, Set<string>>();
  for (const l of lines)
    if (l.msg === "Turn registered" && l.iid && l.turnId)
      turnsAt.set(l.iid, (turnsAt.get(l.iid) ?? new Set()).add(l.turnId));
  for (const [iid, turnIds] of turnsAt) {
    const tasks = await taskAdmissions(stack, iid);
    const extra = tasks - turnIds.size;
    if (extra > 0) duplicates += extra;
    if (extra > (admittedTwice ? 1 : 0))
      violations.push(
        `${tasks} task admissions for ${turnIds.size} Turn(s) at ${iid} after a kill at ${killAt}`,
      );
  }
  const trialRequests: RecordedRequest[] = (await plan.sim.requests()).slice(seqStart);
  const recorded = trialRequests.filter((r) => r.status === 200);
  // A Turn cut by a Harness kill is admitted once more on its kept conversation (ADR-0175,
  // the `readmitted` notice): its prompt may reach the model twice, as in the admit-sent window.
  const window =
    killAt === "admit-sent" || killAt === "random" || killAt === "harness-kill"
      ? "admit-sent"
      : isOtherKill(killAt)
        ? "pick-delivered"
        : killAt;
  // …and its prompt reaches the model once within one Turn (§10.9 on the raw requests).
  const seen = new Set<string>();
  for (const r of recorded) {
    const strict = noPromptAdmittedTwice([r.raw], window);
    if (!strict.ok && !seen.has(strict.reason)) violations.push(strict.reason);
    if (!strict.ok) seen.add(strict.reason);
  }
  // A task sent again goes on a new conversation that says so (after a Harness kill; and never
  // otherwise): conversations opened without the `conversation-new` notice are as uninterrupted.
  for (const [model, count] of conversationOpenings(trialRequests)) {
    const expected = plan.openings.get(model)?.plain ?? 0;
    if (count.plain > expected)
      violations.push(
        `${count.plain} conversations of ${model} opened without the conversation-new notice (uninterrupted: ${expected})`,
      );
  }
  if (killAt === "endpoint-kill") violations.push(...repeatsWithChangedBytes(trialRequests));
  // The Harness keeps its conversations (ADR-0175): a continued conversation's first request
  // after the restart extends the last request before it byte for byte; nothing is doubled.
  if (killAt === "harness-kill") violations.push(...requestsExtendAcrossRestart(trialRequests));
  return { workflow, killAt, nth, killed, finalValue, duplicates, violations };
}

/**
 * Task admissions the Harness holds for `iid`: every Submission of its stream (one per
 * admission, settled or not) except the nudges it started.
 */
async function taskAdmissions(stack: Stack, iid: string): Promise<number> {
  const res = await fetch(
    `${stack.harnessUrl}/conversations/${encodeURIComponent(iid)}/stream?offset=0&wait=0`,
    {
      headers: { authorization: `Bearer ${stack.harnessToken}` },
    },
  );
  if (res.status !== 200) return 0;
  const page = (await res.json()) as {
    events: Array<{ type: string; submissionId?: string; kind?: string }>;
  };
  const all = new Set<string>();
  const nudges = new Set<string>();
  for (const e of page.events) {
    if (e.submissionId) all.add(e.submissionId);
    if (e.type === "submission-started" && e.kind === "nudge" && e.submissionId) nudges.add(e.submissionId);
  }
  return all.size - nudges.size;
}

/**
 * The store's run ids (`GET /runs`, asked again while the Orchestrator is down for up to 3 s).
 * With `"may-be-down"` (polled while a crash point may have just fired) a down Orchestrator
 * gives `undefined`; otherwise it throws: no trial may call a run lost because the list was
 * never answered.
 */
async function runIds(stack: Stack): Promise<string[]>;
async function runIds(stack: Stack, down: "may-be-down"): Promise<string[] | undefined>;
async function runIds(stack: Stack, down?: "may-be-down"): Promise<string[] | undefined> {
  for (let i = 0; i < 100; i++) {
    const res = await http(stack, "/runs");
    if (res.status === 200)
      return ((res.body as unknown as Array<{ runId: string }>) ?? []).map((r) => r.runId);
    if (res.status !== 0) throw new Error(`GET /runs answered ${res.status}: ${JSON.stringify(res.body)}`);
    await sleep(30);
  }
  if (down) return undefined;
  throw new Error("GET /runs did not answer for 3 s");
}

async function answerGates(stack: Stack, workflow: Workflow, runId: string, body: Record<string, unknown>) {
  const gates = WORKFLOWS[workflow].gates as Record<string, string>;
  for (const gate of (body.gates as Array<{ id: string; acceptsNow: string[] }>) ?? []) {
    const event = gates[gate.id];
    if (event && gate.acceptsNow.includes(event))
      await http(stack, `/runs/${runId}/gates/${gate.id}/events`, {
        method: "POST",
        body: JSON.stringify({ type: event }),
      });
  }
}
