import { escapeModelText, type PickAnswer, type RunFeedEvent, type UsageTotals } from "@jr2/wire";
import { cachePercent } from "../durability/usage-totals.js";
import { describeGate } from "./gate-text.js";
import { hookFailure, hookSucceeded } from "./hook-text.js";
import { JR2 } from "./invocation.js";

/**
 * Renders one run-feed event as a line a person reads while a run goes: states entered, Turns
 * admitted, picks with their answers, cache hits per model request. Every text a model or its
 * server wrote — tool names, arguments, summaries, reasons, messages, fault details — is
 * printed through `escapeModelText` (issue 25 §7): a newline in a tool name reads `\n` and can
 * never start a line of jr2's own; ANSI/OSC escapes and bidi controls read as escapes too. The
 * whole line is escaped once more, keeping only jr2's own line breaks (a Gate's lines).
 */
export function formatFeedEvent(event: RunFeedEvent, runId: string): string {
  return escapeModelText(feedLine(event, runId), { lines: "keep" });
}

/** A model-written text printed inside one line. */
const m = (text: string | undefined | null): string => escapeModelText(text ?? "");

/** The line of `event`, as received. */
function feedLine(event: RunFeedEvent, runId: string): string {
  const time = event.at.slice(11, 19);
  switch (event.type) {
    case "status":
      return event.status === "running"
        ? `${time}  state     ${formatValue(event.value)}`
        : `${time}  ${event.status.padEnd(9)} ${formatValue(event.value)}${event.reason ? `  (${m(event.reason)})` : ""}${event.outcome ? `\n${time}  outcome   ${event.outcome}` : ""}`;
    case "admission":
      return `${time}  turn      ${event.child}  ${event.kind === "nudge" ? "nudge (asked again)" : "task admitted"}  Allowed now: ${event.allowed.join(", ") || "none"}`;
    case "pick":
      return `${time}  pick      ${event.child}  ${m(event.name)}${formatArguments(event.arguments)} → ${formatAnswer(event.answer)}`;
    case "usage": {
      const pct =
        event.promptTokens && event.cachedTokens !== null
          ? `${Math.round((100 * event.cachedTokens) / event.promptTokens)}%`
          : "?";
      return `${time}  model     ${event.child}  prompt ${event.promptTokens ?? "?"}  cached ${event.cachedTokens ?? "?"} (${pct})  completion ${event.completionTokens ?? "?"}`;
    }
    case "retry":
      return formatRetry(time, event);
    case "tool-call":
      return `${time}  ${event.disposition === "working" ? "tool     " : event.disposition.padEnd(9)} ${event.child}  ${m(event.name)} ${m(event.summary)}${event.reason ? `  (${m(event.reason)})` : ""}`;
    case "warning":
      return `${time}  WARNING   ${event.child}  ${m(event.message)}`;
    case "queued":
      return event.waitedMs !== undefined && event.position === undefined
        ? `${time}  queued    ${event.child}  waited ${(event.waitedMs / 1000).toFixed(1)} s in all for the KV working set`
        : `${time}  queued    ${event.child}  #${event.position ?? "?"} waiting: ${event.reason ?? "KV working set full"}`;
    case "text-call":
      return event.where === "reasoning"
        ? `${time}  text-call ${event.child}  the model wrote a tool call inside its reasoning instead of calling it; nothing was run`
        : `${time}  text-call ${event.child}  the model wrote a tool call as text instead of calling it; is the model server's tool-call parser on?`;
    case "fault": {
      // Not a Turn's (`<state>#<agent>`): a workspace whose Repo Slot was refused at start.
      if (!event.child.includes("#"))
        return `${time}  fault     ${event.child}  ${m(event.reason)}${event.detail ? `: ${m(event.detail)}` : ""}`;
      const cause = event.cause ? `, cause: ${event.cause}` : "";
      return `${time}  fault     ${event.child}  agent.fault { reason: ${event.reason}${cause} }${event.detail ? `: ${m(event.detail)}` : ""}`;
    }
    case "gate":
      return [
        `${time}  gate      ${event.gate.id} is open${event.since ? ` (waiting since ${event.since.slice(11, 19)})` : ""}; accepts now: ${event.gate.acceptsNow.join(", ") || "none yet"}`,
        ...describeGate(event.gate, "                  "),
        `                  answer: ${JR2} gate ${runId} ${event.gate.id} <${event.gate.accepts.map((a) => a.name).join("|")}> [--payload JSON]`,
      ].join("\n");
    case "gate-answered":
      return `${time}  answered  ${event.gate} ← ${event.event} (by ${event.by})`;
    case "timer":
      return `${time}  timer     ${event.after} fired → ${formatValue(event.value)}`;
    case "forked-to":
      return `${time}  forked    to ${event.runId} from version ${event.version} (by ${event.by})`;
    case "forked-from":
      return `${time}  forked    from ${event.runId}@${event.version} (by ${event.by}) at ${formatValue(event.value)}`;
    case "adopted":
      return `${time}  adopted   by instance ${event.instance} (lease epoch ${event.epoch}): its owner stopped renewing; Turns re-attached`;
    case "resumed":
      return `${time}  resumed   drift accepted: ${event.accepted}${event.moved.length ? `; on a new conversation: ${event.moved.join(", ")}` : ""} (by ${event.by})`;
    case "retried":
      if (event.machineFault) {
        const m = event.machineFault;
        const from = m.from === "input" ? "started again from its input" : `restored version ${m.from}`;
        return `${time}  retried   the Machine fault (${m.reason}): ${from}${m.event ? `; delivered again: ${m.event}` : ""} (by ${event.by})`;
      }
      return `${time}  retried   ${event.child} from ${event.fromVersion === null ? "its last save before the fault" : `version ${event.fromVersion}`}, as Turn ${event.turnId} (by ${event.by})`;
    case "repo-slot":
      return event.event === "attached"
        ? `${time}  repo      ${event.workspace}/${event.slot} on branch ${event.branch} from ${event.commit.slice(0, 12)}`
        : `${time}  pushed    ${event.workspace}/${event.slot} ${event.branch} @ ${event.commit.slice(0, 12)} to ${event.url ?? "its remote"}${event.hook ? hookText(event.hook) : ""}`;
  }
}

type RetryEvent = Extract<RunFeedEvent, { type: "retry" }>;
type HookResult = NonNullable<Extract<RunFeedEvent, { type: "repo-slot" }>["hook"]>;

/**
 * The publish hook on a `pushed` line (ADR-0226, ADR-0290): `exit 0` and the URL it printed, or
 * `FAILED` with its exit and first line — a failed hook's URL is not shown as its result.
 */
function hookText(h: HookResult): string {
  return hookSucceeded(h)
    ? `; publish hook exit 0${h.url ? ` (${m(h.url)})` : ""}`
    : `; publish hook FAILED (${hookFailure(h)}); the push stands`;
}

/**
 * A retry line. The Harness's model-request retries (issue 10 §3) carry `waitMs` and `model`:
 * `unavailable` reads as waiting for the model endpoint, `stream-cut` as the same request sent
 * again; the Orchestrator's own (admission, lost conversation) and an older Harness's carry
 * only `attempt` and `reason`.
 */
function formatRetry(time: string, event: RetryEvent): string {
  const head = `${time}  retry     ${event.child}  `;
  const said = event.message ? ` — ${m(event.message)}` : "";
  if (event.waitMs === undefined) return `${head}attempt ${event.attempt}: ${event.reason}${said}`;
  const wait = `${(event.waitMs / 1000).toFixed(1)} s`;
  const model = event.model ? ` (model ${event.model})` : "";
  switch (event.reason) {
    case "unavailable":
      return `${time}  waiting   ${event.child}  for the model endpoint${model}: down or loading, trying again in ${wait} (attempt ${event.attempt})${said}`;
    case "stream-cut":
      return `${head}the model's answer was cut off${model}; the same request again in ${wait} (attempt ${event.attempt})${said}`;
    default:
      return `${head}attempt ${event.attempt}: ${event.reason}${model}, next in ${wait}${said}`;
  }
}

/** A state value in one line: `review`, `work.assigned, human.answered`. */
export function formatValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value && typeof value === "object") {
    return Object.entries(value)
      .map(([k, v]) => (typeof v === "string" ? `${k}.${v}` : `${k}.(${formatValue(v)})`))
      .join(", ");
  }
  return String(value ?? "");
}

/** A pick's arguments in short: `(k: v, …)`, at most 80 characters; nothing when absent or empty. */
function formatArguments(args: unknown): string {
  if (args === undefined || args === null) return "";
  const text = typeof args === "object" ? JSON.stringify(args) : String(args);
  if (text === "{}" || text === "[]") return "";
  return ` ${m(text.length > 80 ? `${text.slice(0, 79)}…` : text)}`;
}

function formatAnswer(answer: unknown): string {
  const a = answer as Partial<PickAnswer> | null;
  if (!a) return "no answer (the pick may not have reached the workflow)";
  if (a.refusal)
    return `refused (${a.refusal})${a.issues?.length ? `: ${m(a.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "))}` : ""}`;
  const moved = a.moved === undefined ? "delivered" : a.moved ? "moved" : "did not move";
  return `${moved}${a.turnComplete ? ", turn complete" : `, turn open; Allowed now: ${a.allowed?.join(", ") || "none"}`}`;
}

/**
 * A run's cached tokens in words: `N (P%)`; `?` alone for a run with no model request (issue 22
 * §5: `0 (?)` read as a cache that missed), and `N (?)` where the share cannot be computed.
 */
export function cachedText(u: UsageTotals): string {
  const none = u.requests === 0 || (u.requests === undefined && !u.promptTokens && !u.completionTokens);
  if (none) return "?";
  const pct = cachePercent(u);
  return `${u.cachedTokens ?? "?"} (${pct === null ? "?" : `${pct}%`})`;
}
