import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";
import type { Gate, RunDetail, StartRunAnswer } from "@jr2/wire";
import { cachePercent } from "../durability/usage-totals.js";
import { CliHttpError, type CliTarget, call, followFeed, resolveTarget } from "./client.js";
import { EXIT, exitCodeOf, withExitCode } from "./exit-codes.js";
import { formatFeedEvent, formatValue } from "./feed-printer.js";
import {
  answerFor,
  formatGateAnswer,
  type GateAnswer,
  parseGateAnswers,
  promptGate,
  sendGateAnswer,
} from "./gate-answers.js";

export const runUsage =
  "jr2 run <workflow> [--input JSON] [--follow] [--answer-gates [GATE=]EVENT[:JSON][,…]] [--url URL] [--token T]";
export const gateUsage = "jr2 gate <runId> <gateId> <event> [--payload JSON] [--url URL] [--token T]";

function parseJson(flag: string, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${flag} is not valid JSON: ${(error as Error).message}`);
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
  );
  out.write(`run ${runId} started (workflow ${workflow})\n`);
  if (!values.follow) {
    out.write(`follow it: jr2 follow ${runId}\n`);
    return 0;
  }
  return followRun(target, runId, answers, out);
}

/**
 * Prints a run's feed live until it settles, answering Gates as `jr2 run` does, then how it
 * ended: outcome, final state, the fault, tokens.
 * @returns exit code by the run's outcome (exit-codes.ts): 0 succeeded, 1 failed, 3 faulted,
 *   4 cancelled, 5 drifted, 6 not settled
 */
export async function followRun(
  target: CliTarget,
  runId: string,
  autoAnswers: readonly (GateAnswer | string)[],
  out: NodeJS.WritableStream = process.stdout,
  from = 0,
): Promise<number> {
  // A string is an `--answer-gates` value as written (the signature before ADR-0062 took those).
  const answers = autoAnswers.flatMap((a) => (typeof a === "string" ? parseGateAnswers([a]) : [a]));
  for await (const event of followFeed(target, runId, from)) {
    out.write(`${formatFeedEvent(event, runId)}\n`);
    if (event.type !== "gate") continue;
    const answered = await answerGate(target, runId, event.gate, answers, out);
    // A script's answer was refused and nobody is at a terminal: waiting on would hang it.
    if (answered === "refused" && !process.stdin.isTTY) {
      out.write(
        `run ${runId} still waits at Gate ${event.gate.id}: the --answer-gates answer was refused; stopped following (follow it again: jr2 follow ${runId})\n`,
      );
      return EXIT.usage;
    }
  }
  const detail = await call<RunDetail>(target, "GET", `/runs/${encodeURIComponent(runId)}`);
  const u = detail.usage;
  const pct = cachePercent(u);
  out.write(
    `run ${runId} ${detail.status}${detail.fault ? ` (${detail.fault.reason}${detail.fault.cause ? `, cause ${detail.fault.cause}` : ""})` : ""}; tokens: prompt ${u.promptTokens ?? "?"}, cached ${u.cachedTokens ?? "?"} (${pct === null ? "?" : `${pct}%`}), completion ${u.completionTokens ?? "?"}\n`,
  );
  // Its own line: the one above reads as it did before outcomes (scripts grep it).
  if (detail.outcome)
    out.write(
      `run ${runId} outcome ${detail.outcome} (final state ${formatValue(detail.finalState ?? detail.value)})\n`,
    );
  const lastFault = detail.faults?.at(-1);
  if (lastFault && !detail.fault)
    out.write(
      `          fault     ${lastFault.state}#${lastFault.agent} agent.fault { reason: ${lastFault.reason}${lastFault.cause ? `, cause: ${lastFault.cause}` : ""} } routed${lastFault.detail ? `: ${lastFault.detail}` : ""}\n`,
    );
  return exitCodeOf(detail.status, detail.outcome);
}

/**
 * Answers a Gate the feed announced: from `auto` (`--answer-gates`), else at the terminal, else
 * says how to answer it. A Gate no longer open (a settled run's log replayed) is left alone.
 * @returns `moved` / `refused` for an automatic answer, `past` for a Gate closed since, else `waits`
 */
async function answerGate(
  target: CliTarget,
  runId: string,
  gate: Gate,
  auto: readonly GateAnswer[],
  out: NodeJS.WritableStream,
): Promise<"moved" | "refused" | "past" | "waits"> {
  if (!(await stillOpen(target, runId, gate.id))) return "past";
  const chosen = answerFor(gate, auto);
  if (chosen) {
    const sent = await sendGateAnswer(target, runId, gate.id, chosen);
    out.write(
      sent.moved
        ? `          gate      ${gate.id} ← ${chosen.event} (moved)\n`
        : `          gate      ${gate.id} refused ${chosen.event}: ${sent.why}; answer it with: jr2 gate ${runId} ${gate.id} <event> [--payload JSON]\n`,
    );
    return sent.moved ? "moved" : "refused";
  }
  if (!process.stdin.isTTY || auto.length > 0) {
    // Nothing will answer here: say so once per Gate, and how to answer it from elsewhere.
    const why =
      auto.length > 0
        ? `--answer-gates ${auto.map(formatGateAnswer).join(",")} has none of the events it accepts now (${gate.acceptsNow.join(", ") || "none yet"})`
        : "no terminal to ask at (pass --answer-gates <event> to answer it from a script)";
    out.write(
      `          gate      ${gate.id} waits: ${why}; answer it with: jr2 gate ${runId} ${gate.id} <event>\n`,
    );
    return "waits";
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    await promptGate(rl, target, runId, gate, out);
  } finally {
    rl.close();
  }
  return "waits";
}

/** Is Gate `gateId` of the run open now? (A failed read says yes: better one line too many.) */
async function stillOpen(target: CliTarget, runId: string, gateId: string): Promise<boolean> {
  const detail = await call<RunDetail>(target, "GET", `/runs/${encodeURIComponent(runId)}`).catch(
    () => undefined,
  );
  return detail === undefined || detail.gates.some((g) => g.id === gateId);
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
    throw error;
  }
  out.write(`${gateId} ← ${type}: moved\n`);
  return 0;
}
