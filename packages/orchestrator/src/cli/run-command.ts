import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import type { StartRunAnswer, WorkflowSummary } from "@jr2/wire";
import { CliHttpError, call, resolveTarget, TARGET_OPTIONS } from "./client.js";
import { EXIT, withExitCode } from "./exit-codes.js";
import { followRun } from "./follow-run.js";
import { fieldText, parseGateAnswers } from "./gate-answers.js";
import { JR2 } from "./invocation.js";
import { formatWorkflow, notServed } from "./workflows-command.js";

export { followRun } from "./follow-run.js";

export const runUsage = `${JR2} run <workflow> [--input JSON] [--follow] [--answer-gates [GATE=]EVENT[:JSON][,…]] [--idempotency-key K] [--url URL] [--token T]`;
export const gateUsage = `${JR2} gate <runId> <gateId> <event> [--payload JSON] [--url URL] [--token T]`;

function parseJson(flag: string, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${flag} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * `jr2 run <workflow> --help`: the usage, then the input keys `<workflow>` accepts as the
 * running Orchestrator serves them (`GET /workflows`); when it cannot be asked, the usage and
 * the command that lists them. Never throws.
 */
export async function runHelp(args: string[]): Promise<string> {
  const usage = `usage: ${runUsage}\n`;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    // Not strict (any flag may stand beside --help); the flags that take a value are declared so.
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: false,
      options: {
        ...TARGET_OPTIONS,
        input: { type: "string" },
        "answer-gates": { type: "string", multiple: true },
        "idempotency-key": { type: "string" },
      },
    });
  } catch {
    return usage;
  }
  const workflow = parsed.positionals[0];
  if (!workflow) return `${usage}a workflow's inputs: \`${JR2} workflows\`\n`;
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  try {
    const target = resolveTarget(
      { url: text(parsed.values.url), token: text(parsed.values.token) },
      process.env,
    );
    const all = await call<WorkflowSummary[]>(target, "GET", "/workflows");
    const found = all.find((w) => w.name === workflow);
    if (!found) return `${usage}${notServed(workflow, all)}\n`;
    return `${usage}\n${formatWorkflow(found.name, found.input)}`;
  } catch (error) {
    return `${usage}its inputs: \`${JR2} workflows ${workflow}\` (could not ask the Orchestrator now: ${(error as Error).message})\n`;
  }
}

/**
 * `jr2 run`: starts a run and, with `--follow`, prints its feed live until it settles. When a
 * Gate opens it shows its question, each accepted event's fields and how to answer;
 * `--answer-gates` answers it (see gate-answers.ts for the syntax), and in a terminal it asks.
 * @returns exit code (ADR-0062, exit-codes.ts): with `--follow` 0 only when the run
 *   succeeded; 2 when the CLI could not start or follow it
 */
export async function runCommand(args: string[], out = process.stdout): Promise<number> {
  try {
    return await startAndFollow(args, out);
  } catch (error) {
    throw withExitCode(error, EXIT.usage);
  }
}

async function startAndFollow(args: string[], out: NodeJS.WritableStream): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      input: { type: "string" },
      follow: { type: "boolean", default: false },
      "answer-gates": { type: "string", multiple: true },
      url: { type: "string" },
      token: { type: "string" },
      "idempotency-key": { type: "string" },
    },
  });
  const workflow = positionals[0];
  if (!workflow) throw new Error(`missing <workflow>\nusage: ${runUsage}`);
  const target = resolveTarget(values, process.env);
  const input = parseJson("--input", values.input);
  const answers = parseGateAnswers(values["answer-gates"] ?? []);
  const { runId } = await call<StartRunAnswer>(
    target,
    "POST",
    `/workflows/${encodeURIComponent(workflow)}/runs`,
    {
      ...(input === undefined ? {} : { input }),
    },
    // One key per `jr2 run` (or the caller's, so a script re-running the command gets the same
    // run): a start re-sent after a reset or a timeout answers the same run (ADR-0282).
    { "idempotency-key": values["idempotency-key"] ?? randomUUID() },
  );
  out.write(`run ${runId} started (workflow ${workflow})\n`);
  if (!values.follow) {
    out.write(`follow it: ${JR2} follow ${runId}\n`);
    return 0;
  }
  return followRun(target, runId, answers, out);
}

/** `jr2 gate <runId> <gateId> <event> [--payload JSON]`: answers a Gate (§6). */
export async function gateCommand(args: string[], out = process.stdout): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { payload: { type: "string" }, url: { type: "string" }, token: { type: "string" } },
  });
  const [runId, gateId, type] = positionals;
  if (!runId || !gateId || !type) throw new Error(`missing arguments\nusage: ${gateUsage}`);
  const payload = parseJson("--payload", values.payload) ?? {};
  if (typeof payload !== "object" || Array.isArray(payload) || payload === null) {
    throw new Error("--payload must be a JSON object");
  }
  const target = resolveTarget(values, process.env);
  try {
    await call(
      target,
      "POST",
      `/runs/${encodeURIComponent(runId)}/gates/${encodeURIComponent(gateId)}/events`,
      {
        ...payload,
        type,
      },
    );
  } catch (error) {
    if (error instanceof CliHttpError && error.status === 409) {
      const now = (error.body?.acceptsNow as string[] | undefined) ?? [];
      out.write(`not now: ${error.message}\naccepts now: ${now.join(", ") || "none"}\n`);
      return 1;
    }
    // The refused field named, a missing one told from a wrong value (as the terminal prompt does).
    if (error instanceof CliHttpError && error.body?.code === "JR2_ERR_GATE_PAYLOAD_INVALID") {
      const issues = (error.body.issues as Parameters<typeof fieldText>[0][] | undefined) ?? [];
      out.write(`refused: ${error.message}\n${issues.map((i) => `  ${fieldText(i)}\n`).join("")}`);
      return 1;
    }
    throw error;
  }
  out.write(`${gateId} ← ${type}: moved\n`);
  return 0;
}
