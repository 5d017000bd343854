import type { PickAnswer, RunFeedEvent } from "@jr2/wire";

/**
 * Renders one run-feed event as a line a person reads while a run goes: states entered, Turns
 * admitted, picks with their answers, cache hits per model request.
 */
export function formatFeedEvent(event: RunFeedEvent, runId: string): string {
  const time = event.at.slice(11, 19);
  switch (event.type) {
    case "status":
      return event.status === "running"
        ? `${time}  state     ${formatValue(event.value)}`
        : `${time}  ${event.status.padEnd(9)} ${formatValue(event.value)}${event.reason ? `  (${event.reason})` : ""}`;
    case "admission":
      return `${time}  turn      ${event.child}  ${event.kind === "nudge" ? "nudge (asked again)" : "task admitted"}  Allowed now: ${event.allowed.join(", ") || "none"}`;
    case "pick":
      return `${time}  pick      ${event.child}  ${event.name} → ${formatAnswer(event.answer)}`;
    case "usage": {
      const pct =
        event.promptTokens && event.cachedTokens !== null
          ? `${Math.round((100 * event.cachedTokens) / event.promptTokens)}%`
          : "?";
      return `${time}  model     ${event.child}  prompt ${event.promptTokens ?? "?"}  cached ${event.cachedTokens ?? "?"} (${pct})  completion ${event.completionTokens ?? "?"}`;
    }
    case "retry":
      return `${time}  retry     ${event.child}  attempt ${event.attempt}: ${event.reason}${event.message ? ` — ${event.message}` : ""}`;
    case "text-call":
      return `${time}  text-call ${event.child}  the model wrote a tool call as text (is the server's tool-call parser on?); asked again`;
    case "fault": {
      const detail = (event as { detail?: string }).detail;
      return `${time}  fault     ${event.child}  agent.fault { reason: ${event.reason} }${detail ? `: ${detail}` : ""}`;
    }
    case "gate":
      return [
        `${time}  gate      ${event.gate.id} is open; accepts now: ${event.gate.acceptsNow.join(", ") || "none yet"}`,
        `                  answer: jr2 gate ${runId} ${event.gate.id} <${event.gate.accepts.map((a) => a.name).join("|")}> [--payload JSON]`,
      ].join("\n");
  }
}

function formatValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value && typeof value === "object") {
    return Object.entries(value)
      .map(([k, v]) => (typeof v === "string" ? `${k}.${v}` : `${k}.(${formatValue(v)})`))
      .join(", ");
  }
  return String(value ?? "");
}

function formatAnswer(answer: unknown): string {
  const a = answer as Partial<PickAnswer> | null;
  if (!a) return "no answer (the pick may not have reached the workflow)";
  if (a.refusal)
    return `refused (${a.refusal})${a.issues?.length ? `: ${a.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}` : ""}`;
  const moved = a.moved === undefined ? "delivered" : a.moved ? "moved" : "did not move";
  return `${moved}${a.turnComplete ? ", turn complete" : `, turn open; Allowed now: ${a.allowed?.join(", ") || "none"}`}`;
}
