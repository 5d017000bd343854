import { parseArgs } from "node:util";
import type { CancelAnswer, RunDetail, RunPage, RunSummary } from "@jr2/wire";
import { call, resolveTarget, TARGET_OPTIONS } from "./client.js";
import { EXIT, withExitCode } from "./exit-codes.js";
import { formatValue } from "./feed-printer.js";
import { followRun } from "./follow-run.js";
import { parseGateAnswers } from "./gate-answers.js";
import { JR2 } from "./invocation.js";
import { showCommand, showUsage } from "./show-command.js";
import { transcriptCommand, transcriptUsage } from "./transcript-command.js";

/** A `jr2` command: usage line and body (exit code). */
interface Command {
  usage: string;
  run(args: string[]): Promise<number>;
}

/**
 * `jr2 runs`, `jr2 follow`, `jr2 cancel`: the runs a person already started.
 * @see SPEC §4.1 (GET /runs, GET /runs/:id/events, POST /runs/:id/cancel)
 */
export const runsCommands: Record<string, Command> = {
  runs: {
    usage: `${JR2} runs [--status running|done|faulted|cancelled|drifted] [--outcome succeeded|failed|faulted|cancelled] [--workflow NAME] [--limit N] [--cursor C] [--url URL] [--token T]`,
    async run(args) {
      const { values } = parseArgs({
        args,
        options: {
          status: { type: "string" },
          outcome: { type: "string" },
          workflow: { type: "string" },
          limit: { type: "string" },
          cursor: { type: "string" },
          ...TARGET_OPTIONS,
        },
      });
      const target = resolveTarget(values, process.env);
      const params = new URLSearchParams();
      for (const key of ["status", "outcome", "workflow", "limit", "cursor"] as const)
        if (values[key] !== undefined) params.set(key, values[key]);
      const query = params.size ? `?${params}` : "";
      const answer = await call<RunSummary[] | RunPage>(target, "GET", `/runs${query}`);
      const runs = Array.isArray(answer) ? answer : answer.runs;
      if (runs.length === 0) process.stdout.write("no runs\n");
      for (const r of runs) process.stdout.write(`${formatSummary(r)}\n`);
      if (!Array.isArray(answer) && answer.nextCursor)
        process.stdout.write(
          `more: ${JR2} runs ${[...params]
            .filter(([k]) => k !== "cursor")
            .map(([k, v]) => `--${k} ${v}`)
            .join(" ")} --cursor ${answer.nextCursor}\n`,
        );
      return 0;
    },
  },
  follow: {
    usage: `${JR2} follow <runId> [--answer-gates [GATE=]EVENT[:JSON][,…]] [--url URL] [--token T]`,
    async run(args) {
      try {
        const { values, positionals } = parseArgs({
          args,
          allowPositionals: true,
          options: { "answer-gates": { type: "string", multiple: true }, ...TARGET_OPTIONS },
        });
        const runId = positionals[0];
        if (!runId) throw new Error(`missing <runId>; list runs with \`${JR2} runs\``);
        const target = resolveTarget(values, process.env);
        return await followRun(target, runId, parseGateAnswers(values["answer-gates"] ?? []));
      } catch (error) {
        throw withExitCode(error, EXIT.usage);
      }
    },
  },
  show: { usage: showUsage, run: (args) => showCommand(args) },
  transcript: { usage: transcriptUsage, run: (args) => transcriptCommand(args) },
  cancel: {
    usage: `${JR2} cancel <runId> [--url URL] [--token T]`,
    async run(args) {
      const { values, positionals } = parseArgs({ args, allowPositionals: true, options: TARGET_OPTIONS });
      const runId = positionals[0];
      if (!runId) throw new Error(`missing <runId>; list runs with \`${JR2} runs\``);
      const target = resolveTarget(values, process.env);
      const path = `/runs/${encodeURIComponent(runId)}`;
      // The status seen goes with the cancel: a resume that wins meanwhile is not cancelled (issue 22).
      const seen = await call<RunDetail>(target, "GET", path);
      const answer = await call<CancelAnswer>(target, "POST", `${path}/cancel`, { expect: seen.status });
      const was =
        seen.status === "drifted" ? ` (it was drifted${seen.fault ? `: ${seen.fault.reason}` : ""})` : "";
      process.stdout.write(`run ${answer.runId} ${answer.status}${was}\n`);
      return 0;
    },
  },
};

/**
 * One `jr2 runs` line: id, workflow, status, then the outcome and final state once settled, or
 * "at Gate X" while a Gate waits, and when it last changed.
 */
export function formatSummary(r: RunSummary): string {
  const where = r.outcome
    ? `${r.outcome.padEnd(9)} ${formatValue(r.finalState)}`
    : r.status === "drifted" && r.value !== undefined
      ? `saved at ${formatValue(r.value)}`
      : r.gates?.length
        ? `at Gate ${r.gates.join(", ")}`
        : "";
  return `${r.runId}  ${r.workflow.padEnd(12)} ${r.status.padEnd(9)} ${where.padEnd(28)} ${r.updatedAt}`;
}
