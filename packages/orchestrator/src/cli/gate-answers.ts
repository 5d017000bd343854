/**
 * Gates in the CLI (issue 11 "Gates in the CLI", ADR-0062): what `--answer-gates` says, how a
 * Gate reads in a terminal (its question and each accepted event's fields), and the answers —
 * automatic from `--answer-gates`, or asked at the terminal again after each refusal.
 *
 * `--answer-gates` is a comma-separated list (the flag may repeat) of `[GATE=]EVENT[:PAYLOAD]`:
 * `merge`, `merge_gate=merge`, `confirm_gate=confirm:{"note":"x"}`. A Gate takes the first
 * entry naming it (or naming no Gate) whose event it accepts now; commas inside the JSON
 * payload are fine.
 */
import type { Interface } from "node:readline/promises";
import type { Gate } from "@jr2/wire";
import { CliHttpError, type CliTarget, call } from "./client.js";

/** One `--answer-gates` entry. */
export interface GateAnswer {
  gate?: string;
  event: string;
  payload: Record<string, unknown>;
}

/** Splits on commas outside JSON (braces, brackets, strings). */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let inString = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter(Boolean);
}

/**
 * Parses `--answer-gates` values. @throws Error naming the entry when its payload is not a
 * JSON object or it names no event
 */
export function parseGateAnswers(values: readonly string[]): GateAnswer[] {
  return values.flatMap(splitTopLevel).map((entry) => {
    const match = /^(?:([^=:{]+)=)?([^:=]+)(?::(.*))?$/s.exec(entry);
    if (!match?.[2]) throw new Error(`--answer-gates entry \`${entry}\` is not [GATE=]EVENT[:JSON]`);
    const payload = match[3] === undefined ? {} : payloadOf(match[3], `--answer-gates entry \`${entry}\``);
    return { ...(match[1] ? { gate: match[1].trim() } : {}), event: match[2].trim(), payload };
  });
}

/** `text` as a JSON object payload. @throws Error naming `what` */
export function payloadOf(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${what}: the payload is not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new Error(`${what}: the payload must be a JSON object`);
  return value as Record<string, unknown>;
}

/** An entry as `--answer-gates` writes it. */
export function formatGateAnswer(answer: GateAnswer): string {
  const payload = Object.keys(answer.payload).length ? `:${JSON.stringify(answer.payload)}` : "";
  return `${answer.gate === undefined ? "" : `${answer.gate}=`}${answer.event}${payload}`;
}

/** The entry answering `gate` now, if any. */
export function answerFor(gate: Gate, answers: readonly GateAnswer[]): GateAnswer | undefined {
  return answers.find(
    (a) => (a.gate === undefined || a.gate === gate.id) && gate.acceptsNow.includes(a.event),
  );
}

/** What sending an answer came to: moved, or refused with the words to show. */
export type GateSendResult = { moved: true } | { moved: false; why: string };

/** Sends `{ type: event, ...payload }` to the Gate; a refusal is data naming the field. */
export async function sendGateAnswer(
  target: CliTarget,
  runId: string,
  gateId: string,
  answer: GateAnswer,
): Promise<GateSendResult> {
  try {
    await call(
      target,
      "POST",
      `/runs/${encodeURIComponent(runId)}/gates/${encodeURIComponent(gateId)}/events`,
      {
        ...answer.payload,
        type: answer.event,
      },
    );
    return { moved: true };
  } catch (error) {
    if (!(error instanceof CliHttpError)) throw error;
    return { moved: false, why: refusalText(error) };
  }
}

/** A refusal in words: the message, each payload issue by field, what the Gate accepts now. */
export function refusalText(error: CliHttpError): string {
  const issues = (error.body?.issues as PayloadIssue[] | undefined) ?? [];
  const fields = issues.map(fieldText);
  const now = error.body?.acceptsNow as string[] | undefined;
  return [
    error.message,
    ...(fields.length ? [fields.join("; ")] : []),
    ...(now === undefined ? [] : [`accepts now: ${now.join(", ") || "none"}`]),
  ].join("; ");
}

/** One payload issue as the Orchestrator sends it (zod's, with `code`). */
interface PayloadIssue {
  path?: unknown[];
  message?: string;
  code?: string;
}

/**
 * One refused field, a missing one told from a wrong value (issue 22 §5): `field \`channel\`:
 * missing — it is required`, `field \`channel\`: wrong value — …`, `field \`chanel\`: unknown …`.
 */
export function fieldText(issue: PayloadIssue): string {
  const name = `field \`${(issue.path ?? []).join(".") || "(payload)"}\``;
  const message = issue.message ?? "invalid";
  if (issue.code === "invalid_type" && /received undefined/.test(message))
    return `${name}: missing — it is required (${message})`;
  if (issue.code === "unrecognized_keys" || issue.code === undefined) return `${name}: ${message}`;
  return `${name}: wrong value — ${message}`;
}

/**
 * Asks at the terminal until the Gate moved or the person leaves it open (an empty answer);
 * asks again after each refusal, saying why. `<event> [payload JSON]`.
 */
export async function promptGate(
  rl: Interface,
  target: CliTarget,
  runId: string,
  gate: Gate,
  out: NodeJS.WritableStream,
): Promise<void> {
  for (;;) {
    const text = (
      await rl.question(`answer ${gate.id} with <event> [payload JSON] (empty: leave it open): `)
    ).trim();
    if (!text) return;
    const space = text.indexOf(" ");
    const event = space < 0 ? text : text.slice(0, space);
    let payload: Record<string, unknown>;
    try {
      payload = space < 0 ? {} : payloadOf(text.slice(space + 1), event);
    } catch (error) {
      out.write(`          gate      ${(error as Error).message}; try again\n`);
      continue;
    }
    const sent = await sendGateAnswer(target, runId, gate.id, { event, payload });
    if (sent.moved) {
      out.write(`          gate      ${gate.id} ← ${event} (moved)\n`);
      return;
    }
    out.write(`          gate      ${gate.id} refused ${event}: ${sent.why}; try again\n`);
  }
}
