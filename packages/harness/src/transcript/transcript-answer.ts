import type { CallDisposition, TranscriptEntry, TranscriptToolCall } from "@jr2/wire";
import type { AssistantMessage } from "@mariozechner/pi-ai";
import type { NeverRun } from "../provider/answer/answer-ingestion.js";
import type { FetchProbe } from "../provider/fetch-probe.js";
import { reportedUsage } from "../provider/provider-usage.js";

/**
 * The Turn transcript's answer side (issue 11 item 3, ADR-0159): one model request's answer as
 * received — text, reasoning, each tool call with the model's own argument bytes and what the
 * Harness did with it — and a retried or failed attempt the conversation never saw. Pure.
 * @see SPEC §7.2; docs/adr/0159-harness-transcript-stream.md
 */

/** What became of one tool call: its disposition and, for `not-run` and `invented`, why in words. */
export interface CallFate {
  disposition: CallDisposition;
  reason?: string;
}

/** One attempt's answer as the request saw it. */
export interface AnswerReport {
  /** 1 for the first attempt. */
  attempt: number;
  /** pi's answer (for a failed attempt: what had arrived before it failed), if any. */
  message: AssistantMessage | undefined;
  /** Tool-call argument bytes as the model sent them, by content index. */
  raw: ReadonlyMap<number, string>;
  probe: Pick<FetchProbe, "usage" | "timings" | "finishReason">;
  /** The conversation holds this answer (the one pi was given). */
  replayed: boolean;
  /** Why the attempt did not give an answer (never a URL's credentials or a key). */
  error?: string;
}

type AnswerEntry = Extract<TranscriptEntry, { kind: "answer" }>;

/** The fate of each call of an attempt the conversation never saw. */
export const NEVER_SEEN: CallFate = {
  disposition: "not-run",
  reason: "the attempt did not reach the conversation; the call was never run",
};

/** The fate of a call of a delivered answer pi never ran (the run ended first). */
export const NEVER_REACHED: CallFate = { disposition: "not-run", reason: "the run ended before it ran" };

/**
 * The `answer` entry of `report` for model entry `model`; each call's fate from `fate` (by
 * tool-call id), else {@link NEVER_SEEN} / {@link NEVER_REACHED}.
 */
export function answerEntry(
  model: string,
  report: AnswerReport,
  fate: (toolCallId: string) => CallFate | undefined,
): AnswerEntry {
  const content = report.message?.content ?? [];
  const text = content.map((c) => (c.type === "text" ? c.text : "")).join("");
  const reasoning = content.map((c) => (c.type === "thinking" ? c.thinking : "")).join("");
  const toolCalls: TranscriptToolCall[] = [];
  content.forEach((c, index) => {
    if (c.type !== "toolCall") return;
    const raw = report.raw.get(index) ?? (c as { rawArguments?: string }).rawArguments ?? "";
    const replayed = JSON.stringify(c.arguments ?? {});
    const f = report.replayed ? (fate(c.id) ?? NEVER_REACHED) : NEVER_SEEN;
    const serverId = (c as { serverId?: string }).serverId;
    toolCalls.push({
      id: c.id,
      ...(serverId !== undefined ? { serverId } : {}),
      name: c.name,
      rawArguments: raw,
      ...(report.replayed && replayed !== raw ? { replayedArguments: replayed } : {}),
      disposition: f.disposition,
      ...(f.reason !== undefined ? { reason: f.reason } : {}),
    });
  });
  return {
    kind: "answer",
    model,
    text,
    ...(reasoning.length > 0 ? { reasoning } : {}),
    toolCalls,
    ...(report.probe.finishReason ? { finishReason: report.probe.finishReason } : {}),
    usage: usageOf(report.probe),
    attempt: report.attempt,
    replayed: report.replayed,
    ...(report.error !== undefined ? { error: report.error } : {}),
  };
}

/** The usage the wire reported: `null` when none at all, else `null` per field not reported (ADR-0400). */
export function usageOf(probe: Pick<FetchProbe, "usage" | "timings">): AnswerEntry["usage"] {
  if (!probe.usage && !probe.timings) return null;
  const u = reportedUsage(probe);
  const missing = new Set<string>(u.unreported);
  const field = (k: "promptTokens" | "cachedTokens" | "completionTokens") => (missing.has(k) ? null : u[k]);
  return {
    promptTokens: field("promptTokens"),
    cachedTokens: field("cachedTokens"),
    completionTokens: field("completionTokens"),
  };
}

/** Why a call was answered without running, in words (the receipt's reason, for a reader). */
export type NotRunWhy =
  | NeverRun
  | { reason: "turn-over" }
  | { reason: "stopped" }
  | { reason: "refused-arguments"; detail: string }
  | { reason: "outside-cwd"; path: string };

/** The fate of a call that was not run: `invented` for a name on no tools block, else `not-run`. */
export function notRunFate(why: NotRunWhy | { reason: "unknown-tool" }): CallFate {
  switch (why.reason) {
    case "unknown-tool":
      return { disposition: "invented", reason: "no tool of that name is in the tools block" };
    case "truncated":
      return { disposition: "not-run", reason: "the answer was cut at the output limit" };
    case "not-json":
      return { disposition: "not-run", reason: "its arguments are not JSON" };
    case "not-object":
      return { disposition: "not-run", reason: `its arguments are ${why.kind}, not a JSON object` };
    case "duplicate":
      return { disposition: "not-run", reason: "the same call appears earlier in this answer" };
    case "merged":
      return {
        disposition: "not-run",
        reason: `the server sent ${why.count} calls with neither an index nor an id to tell them apart; they arrived merged into one`,
      };
    case "turn-over":
      return { disposition: "not-run", reason: "the Turn was already over (an earlier pick ended it)" };
    case "stopped":
      return { disposition: "not-run", reason: "the run was stopped before it ran" };
    case "refused-arguments":
      return { disposition: "not-run", reason: `its arguments do not fit the tool: ${why.detail}` };
    case "outside-cwd":
      return { disposition: "not-run", reason: `its path ${why.path} is outside the working directory` };
  }
}
