import { parseArgs } from "node:util";
import type { CancelAnswer, RunSummary } from "@jr2/wire";
import { call, resolveTarget } from "./client.js";
import { followRun } from "./run-command.js";

/** A `jr2` command: usage line and body (exit code). */
interface Command {
  usage: string;
  run(args: string[]): Promise<number>;
}

const targetOptions = { url: { type: "string" }, token: { type: "string" } } as const;

/**
 * `jr2 runs`, `jr2 follow`, `jr2 cancel`: the runs a person already started.
 * @see SPEC §4.1 (GET /runs, GET /runs/:id/events, POST /runs/:id/cancel)
 */
export const runsCommands: Record<string, Command> = {
  runs: {
    usage: "jr2 runs [--status running|done|faulted|cancelled|drifted] [--url URL] [--token T]",
    async run(args) {
      const { values } = parseArgs({ args, options: { status: { type: "string" }, ...targetOptions } });
      const target = resolveTarget(values, process.env);
      const query = values.status ? `?status=${encodeURIComponent(values.status)}` : "";
      const runs = await call<RunSummary[]>(target, "GET", `/runs${query}`);
      if (runs.length === 0) process.stdout.write("no runs\n");
      for (const r of runs)
        process.stdout.write(`${r.runId}  ${r.workflow.padEnd(12)} ${r.status.padEnd(9)} ${r.updatedAt}\n`);
      return 0;
    },
  },
  follow: {
    usage: "jr2 follow <runId> [--answer-gates EVENT[,EVENT]] [--url URL] [--token T]",
    async run(args) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { "answer-gates": { type: "string" }, ...targetOptions },
      });
      const runId = positionals[0];
      if (!runId) throw new Error("missing <runId>; list runs with `jr2 runs`");
      const target = resolveTarget(values, process.env);
      return followRun(target, runId, values["answer-gates"]?.split(",").filter(Boolean) ?? []);
    },
  },
  cancel: {
    usage: "jr2 cancel <runId> [--url URL] [--token T]",
    async run(args) {
      const { values, positionals } = parseArgs({ args, allowPositionals: true, options: targetOptions });
      const runId = positionals[0];
      if (!runId) throw new Error("missing <runId>; list runs with `jr2 runs`");
      const target = resolveTarget(values, process.env);
      const answer = await call<CancelAnswer>(target, "POST", `/runs/${encodeURIComponent(runId)}/cancel`);
      process.stdout.write(`run ${answer.runId} ${answer.status}\n`);
      return 0;
    },
  },
};
