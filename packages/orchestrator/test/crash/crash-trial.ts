/**
 * One crash trial's phases (the crash harness, crash-trials.ts runs them): start a run, kill one
 * process at its kill point (the Orchestrator at a phase or at random, the Harness, the model
 * endpoint), restart it, drive the run to its end answering its Gates, then check the trial's
 * invariants from the endpoint's request log, the Orchestrator's log and the store itself.
 * @see crash-trials.ts for the invariants in full
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { noPromptAdmittedTwice, type RecordedRequest, type Stack } from "../../../conformance/src/index.js";
import type { CrashPhase } from "../../src/durability/crash-points.js";
import { STORE_FILE } from "../../src/durability/store/sqlite.js";
import type { EndpointSim } from "./endpoint-sim.js";
import { conversationOpenings, repeatsWithChangedBytes, requestsExtendAcrossRestart } from "./invariants.js";

/** Kills of another process than the Orchestrator (each a phase of the rotation). */
export const OTHER_KILLS = ["harness-kill", "endpoint-kill"] as const;
export type KillAt = CrashPhase | "random" | (typeof OTHER_KILLS)[number];

/** The workflows driven and which phases each can reach (review has no timer). */
export const WORKFLOWS = {
  review: { input: { task: "a hello() function in hello.js" }, gates: { merge_gate: "merge" } },
  triage: { input: { report: "the login page is blank" }, gates: { confirm_gate: "confirm" } },
} as const;
export type Workflow = keyof typeof WORKFLOWS;

/** Whether `workflow` can reach `phase` (only triage arms a timer). */
export const reaches = (workflow: Workflow, phase: KillAt) =>
  phase !== "timer-armed" || workflow === "triage";

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

interface LogLine {
  msg?: string;
  turnId?: string | null;
  runId?: string;
  iid?: string;
  toolCallId?: string;
  delivered?: boolean;
}

/** The JSON log lines, each once (a process killed by a signal can be listed twice by the stack). */
export function logLines(text: string): LogLine[] {
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

export async function startRun(stack: Stack, workflow: Workflow): Promise<string | undefined> {
  const res = await http(stack, `/workflows/${workflow}/runs`, {
    method: "POST",
    body: JSON.stringify({ input: WORKFLOWS[workflow].input }),
  });
  return res.status === 201 ? (res.body?.runId as string) : undefined;
}

/** Answers the run's Gates when they take their event, until the run settles; returns its value. */
export async function driveToEnd(
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

export async function trial(
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
 * The store's run ids (`GET /runs`, asked again for 3 s while down). `"may-be-down"`: a down
 * Orchestrator gives `undefined`; else it throws — a run is never called lost for want of a list.
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
