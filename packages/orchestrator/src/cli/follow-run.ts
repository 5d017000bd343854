/**
 * Following a run from the CLI (`jr2 follow`, and `--follow` of `run`, `retry`, `resume`,
 * `fork`): every event of its log printed until the run really settles, each Gate open while
 * following answered from `--answer-gates` (or asked at a terminal), then how it ended.
 * @see issue 22 §1 and its rule "Follow's end"; ADR-0062 (exit codes)
 */
import { createInterface } from "node:readline/promises";
import { escapeModelText, type Gate, type RunDetail, type RunFeedEvent } from "@jr2/wire";
import { type CliTarget, call, followFeed } from "./client.js";
import { EXIT, exitCodeOf } from "./exit-codes.js";
import { cachedText, formatFeedEvent, formatValue } from "./feed-printer.js";
import {
  answerFor,
  formatGateAnswer,
  type GateAnswer,
  parseGateAnswers,
  promptGate,
  sendGateAnswer,
} from "./gate-answers.js";
import { JR2 } from "./invocation.js";

type StatusEvent = Extract<RunFeedEvent, { type: "status" }>;

/**
 * Prints a run's feed live until it settles — its *current* settlement: a settled status in the
 * middle of the log (a retried or resumed run) is one line, `settled … — later retried` — and
 * answers each Gate open while following, once per opening (one already open when `from` skips
 * its `gate` event included), then how it ended: outcome, final state, the fault, tokens.
 * @param from - the first seq to print (a control's own log entry)
 * @returns exit code by the run's outcome (exit-codes.ts): 0 succeeded, 1 failed, 3 faulted,
 *   4 cancelled, 5 drifted, 6 not settled; 2 when a scripted Gate answer was refused
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
  const refused = (gateId: string) => {
    out.write(
      `run ${runId} still waits at Gate ${gateId}: the --answer-gates answer was refused; stopped following (follow it again: ${JR2} follow ${runId})\n`,
    );
    return EXIT.usage;
  };
  // A Gate opened before `from` has its `gate` event before it: answer it now.
  if (from > 0) {
    const now = await detailOf(target, runId);
    for (const gate of now?.gates ?? []) {
      const answered = await answerGate(target, runId, gate, answers, out);
      if (answered === "refused" && !process.stdin.isTTY) return refused(gate.id);
    }
  }
  let held: StatusEvent | undefined;
  for await (const event of followFeed(target, runId, from)) {
    // A settled status is printed once the next event says whether it was the end.
    if (held) out.write(`${heldLine(held, event, runId)}\n`);
    held = event.type === "status" && event.status !== "running" ? event : undefined;
    if (!held) out.write(`${formatFeedEvent(event, runId)}\n`);
    if (event.type !== "gate") continue;
    const answered = await answerGate(target, runId, event.gate, answers, out);
    // A script's answer was refused and nobody is at a terminal: waiting on would hang it.
    if (answered === "refused" && !process.stdin.isTTY) return refused(event.gate.id);
  }
  if (held) out.write(`${formatFeedEvent(held, runId)}\n`);
  const detail = await call<RunDetail>(target, "GET", `/runs/${encodeURIComponent(runId)}`);
  out.write(settledSummary(runId, detail));
  return exitCodeOf(detail.status, detail.outcome);
}

/**
 * A settled status that more events followed: one line saying it was not the end (issue 22
 * rule "Follow's end") when a retry or a resume revived the run; else printed as it is.
 */
function heldLine(status: StatusEvent, next: RunFeedEvent, runId: string): string {
  if (next.type !== "retried" && next.type !== "resumed") return formatFeedEvent(status, runId);
  const how = status.outcome ?? status.status;
  return `${status.at.slice(11, 19)}  settled   ${how} ${formatValue(status.value)}${status.reason ? `  (${escapeModelText(status.reason)})` : ""} — later ${next.type}`;
}

/**
 * How the run ended: status, fault, tokens; a routed fault; the outcome on its own line, last —
 * the line a reader (and a script's `tail -1`) takes as the end (newcomer review, session 10:
 * the routed fault came after it and read as something that happened later). Pure.
 */
export function settledSummary(runId: string, detail: RunDetail): string {
  const u = detail.usage;
  let text = `run ${runId} ${detail.status}${detail.fault ? ` (${detail.fault.reason}${detail.fault.cause ? `, cause ${detail.fault.cause}` : ""})` : ""}; tokens: prompt ${u.promptTokens ?? "?"}, cached ${cachedText(u)}, completion ${u.completionTokens ?? "?"}\n`;
  const lastFault = detail.faults?.at(-1);
  if (lastFault && !detail.fault)
    text += `          fault     ${lastFault.state}#${lastFault.agent} agent.fault { reason: ${lastFault.reason}${lastFault.cause ? `, cause: ${lastFault.cause}` : ""} } routed${lastFault.detail ? `: ${escapeModelText(lastFault.detail)}` : ""}\n`;
  // Its own line: the first one reads as it did before outcomes (scripts grep it).
  if (detail.outcome)
    text += `run ${runId} outcome ${detail.outcome} (final state ${formatValue(detail.finalState ?? detail.value)})\n`;
  // The fault's detail may carry the model's or its server's words (issue 25 §7).
  return escapeModelText(text, { lines: "keep" });
}

/**
 * Answers a Gate the feed announced: from `auto` (`--answer-gates`), else at the terminal, else
 * says how to answer it. Reads what the Gate accepts *now*: a Gate no longer open (an earlier
 * opening replayed from the log, or one answered since) is left alone, so each opening is
 * answered once.
 * @returns `moved` / `refused` for an automatic answer, `past` for a Gate closed since, else `waits`
 */
async function answerGate(
  target: CliTarget,
  runId: string,
  announced: Gate,
  auto: readonly GateAnswer[],
  out: NodeJS.WritableStream,
): Promise<"moved" | "refused" | "past" | "waits"> {
  const detail = await detailOf(target, runId);
  // A failed read says open, as announced: better one line too many.
  const gate = detail === undefined ? announced : detail.gates.find((g) => g.id === announced.id);
  if (!gate) return "past";
  const chosen = answerFor(gate, auto);
  if (chosen) {
    const sent = await sendGateAnswer(target, runId, gate.id, chosen);
    out.write(
      sent.moved
        ? `          gate      ${gate.id} ← ${chosen.event} (moved)\n`
        : `          gate      ${gate.id} refused ${chosen.event}: ${sent.why}; answer it with: ${JR2} gate ${runId} ${gate.id} <event> [--payload JSON]\n`,
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
      `          gate      ${gate.id} waits: ${why}; answer it with: ${JR2} gate ${runId} ${gate.id} <event>\n`,
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

/** The run's detail now, or undefined when it cannot be read. */
function detailOf(target: CliTarget, runId: string): Promise<RunDetail | undefined> {
  return call<RunDetail>(target, "GET", `/runs/${encodeURIComponent(runId)}`).catch(() => undefined);
}
