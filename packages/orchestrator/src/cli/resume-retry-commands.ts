/**
 * `jr2 resume` and `jr2 retry` (issue 13, ADR-0271): the operator's controls over a drifted or a
 * faulted run, over `POST /runs/:runId/resume` and `POST /runs/:runId/retry`.
 * @see docs/adr/0271-resume-and-retry.md, README "Resume and retry"
 */
import { parseArgs } from "node:util";
import { MachineFaultRetry, type ResumeAnswer, type RetryAnswer } from "@jr2/wire";
import { CliHttpError, type CliTarget, call, resolveTarget } from "./client.js";
import { followRun } from "./follow-run.js";
import { parseGateAnswers } from "./gate-answers.js";
import { JR2 } from "./invocation.js";

/** A `jr2` command: usage line and body (exit code). */
interface Command {
  usage: string;
  run(args: string[]): Promise<number>;
}

const options = {
  url: { type: "string" },
  token: { type: "string" },
  follow: { type: "boolean" },
  "answer-gates": { type: "string", multiple: true },
  "accept-drift": { type: "boolean" },
  yes: { type: "boolean" },
  force: { type: "boolean" },
} as const;

/** The follow flags `jr2 run` takes, taken by every control that revives a run (issue 22 §1). */
export const FOLLOW_FLAGS = "[--follow] [--answer-gates [GATE=]EVENT[:JSON][,…]]";

/** The runId and target of a command line. @throws Error when the runId is missing */
function parsed(args: string[]) {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options });
  const runId = positionals[0];
  if (!runId) throw new Error(`missing <runId>; list runs with \`${JR2} runs\``);
  return { runId, values, target: resolveTarget(values, process.env) };
}

/**
 * `--follow`: the run's feed from the control's own entry until it settles, answering Gates
 * from `--answer-gates`, exiting by its outcome; else 0.
 * @throws Error when `--answer-gates` is given without `--follow` (nothing would answer)
 */
function thenFollow(
  target: CliTarget,
  runId: string,
  values: { follow?: boolean | undefined; "answer-gates"?: string[] | undefined },
  from: number,
  status?: string,
): Promise<number> | number {
  if (values.follow)
    return followRun(target, runId, parseGateAnswers(values["answer-gates"] ?? []), process.stdout, from);
  // Not following a run that runs again: say how to (as `jr2 fork` does), not leave the user guessing.
  if (status === "running") process.stdout.write(followHint(runId));
  return 0;
}

/** The hint a control that revived a run prints when not following it. */
export function followHint(runId: string): string {
  return `  follow it: ${JR2} follow ${runId}\n`;
}

/** `--answer-gates` answers while following: refused before the control acts when `--follow` is absent. */
export function checkFollowFlags(values: { follow?: boolean | undefined; "answer-gates"?: unknown }): void {
  if (values["answer-gates"] !== undefined && !values.follow)
    throw new Error("--answer-gates answers Gates while following: add --follow");
}

export const resumeRetryCommands: Record<string, Command> = {
  resume: {
    usage: `${JR2} resume <runId> [--accept-drift] ${FOLLOW_FLAGS} [--url URL] [--token T]`,
    async run(args) {
      const { runId, values, target } = parsed(args);
      checkFollowFlags(values);
      const accept = values["accept-drift"] === true;
      const path = `/runs/${encodeURIComponent(runId)}/resume`;
      const answer = await call<ResumeAnswer>(target, "POST", path, { acceptDrift: accept });
      process.stdout.write(formatResume(answer));
      if (!answer.resumed) return answer.resumable ? 0 : 1;
      return thenFollow(target, runId, values, answer.seq ?? 0, answer.status);
    },
  },
  retry: {
    usage: `${JR2} retry <runId> [--yes] [--force] ${FOLLOW_FLAGS} [--url URL] [--token T]`,
    async run(args) {
      const { runId, values, target } = parsed(args);
      checkFollowFlags(values);
      if (values["accept-drift"])
        throw new Error(`--accept-drift is \`${JR2} resume\`'s; \`${JR2} retry\` takes none`);
      // `{}` unless asked: what an Orchestrator before ADR-0272 takes (its body is strict).
      const body = { ...(values.yes ? { confirm: true } : {}), ...(values.force ? { force: true } : {}) };
      let answer: RetryAnswer;
      try {
        answer = await call<RetryAnswer>(target, "POST", `/runs/${encodeURIComponent(runId)}/retry`, body);
      } catch (error) {
        const plan = dryRunOf(error);
        if (!plan) throw error;
        // A run faulted by its Machine: the plan, nothing changed (as `jr2 resume` without --accept-drift).
        process.stdout.write(formatMachineRetry(runId, plan, false, values.force === true));
        return 0;
      }
      process.stdout.write(formatRetry(answer));
      return thenFollow(target, runId, values, answer.seq, answer.status);
    },
  },
};

/** The plan of a Machine-fault retry refused for want of `--yes` (ADR-0272); undefined for any other error. */
function dryRunOf(error: unknown): MachineFaultRetry | undefined {
  if (!(error instanceof CliHttpError) || error.body?.code !== "JR2_ERR_RUN_RETRY_UNCONFIRMED")
    return undefined;
  const parsed = MachineFaultRetry.safeParse(error.body.machineFault);
  return parsed.success ? parsed.data : undefined;
}

/** What a retry did, one line; a Machine fault's as its plan. */
export function formatRetry(answer: RetryAnswer): string {
  if (answer.machineFault)
    return formatMachineRetry(answer.runId, answer.machineFault, true, false, answer.status);
  const from =
    answer.fromVersion === null ? "its last save before the fault" : `version ${answer.fromVersion}`;
  return `run ${answer.runId} retried ${answer.child} from ${from} as Turn ${answer.turnId} (a new conversation); ${answer.status}\n`;
}

/**
 * A Machine-fault retry (ADR-0272), done or planned: the fault, the version restored (or the
 * stored input), the event delivered again, the Turns on a new conversation, the source digests.
 */
export function formatMachineRetry(
  runId: string,
  plan: MachineFaultRetry,
  done: boolean,
  force: boolean,
  status?: string,
): string {
  const lines = [`run ${runId} was faulted by its Machine: ${plan.reason}`];
  const { faulted, served } = plan.sourceDigest;
  lines.push(`  workflow source: ${short(faulted)} when it faulted → ${short(served)} served now`);
  lines.push(
    plan.from === "input"
      ? `  ${done ? "started again" : "would start again"} from its stored input (the fault was in its initial macrostep)`
      : `  ${done ? "restored" : "would restore"} version ${plan.from}, the newest saved before the faulting macrostep`,
  );
  if (plan.event) lines.push(`  event delivered again: ${plan.event}`);
  lines.push(
    `  on a new conversation: ${plan.newConversations.includes("*") ? "every Turn (new turnIds and iids)" : plan.newConversations.join(", ") || "no Turn"}`,
  );
  lines.push(
    done
      ? `status ${status ?? "running"}`
      : `dry run, nothing changed: retry with \`${JR2} retry ${runId} --yes${force ? " --force" : ""}\``,
  );
  return `${lines.join("\n")}\n`;
}

/** What a resume did or would do, one fact a line. */
export function formatResume(a: ResumeAnswer): string {
  const lines = [`run ${a.runId} (workflow ${a.workflow}) ${a.resumed ? "resumed" : a.status}`];
  for (const m of a.machines)
    lines.push(`  Machine ${m.machine || "(top)"}: ${short(m.saved)} → ${short(m.served)}`);
  for (const s of a.states)
    lines.push(
      `  state ${s.state} (Machine ${s.machine || "(top)"}): ${s.present ? "still there" : "MISSING"}`,
    );
  for (const m of a.menus)
    lines.push(
      `  Menu of ${m.agent}${m.machine ? ` (${m.machine})` : ""}: ${m.changed ? `changed (${m.why})` : "unchanged"}`,
    );
  if (a.moved.length)
    lines.push(`  ${a.resumed ? "moved" : "would move"} onto a new conversation: ${a.moved.join(", ")}`);
  if (!a.resumed)
    lines.push(
      a.resumable
        ? `dry run, nothing changed: resume with \`${JR2} resume ${a.runId} --accept-drift\``
        : "cannot resume: the served Machine lacks a state the run is in (MISSING above)",
    );
  else lines.push(`status ${a.status}`);
  return `${lines.join("\n")}\n`;
}

function short(fingerprint: string | null): string {
  return fingerprint ? fingerprint.slice(0, 12) : "none";
}
