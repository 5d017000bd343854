import type { AssistantMessage } from "@mariozechner/pi-ai";
import { normalizeArguments } from "../replay/replay-lint.js";

/**
 * Ingestion of a finished answer (before pi sees it): tool-call arguments normalized once, the
 * model's bytes kept beside them, each call's verdict (run or never run) recorded on the run.
 * @see SPEC §7.2; docs/adr/0402-replayed-history.md
 */

/** Why a tool call is not run: from ingestion (`truncated`, `not-json`, `not-object`) or later. */
export type NeverRun =
  | { reason: "truncated" }
  | { reason: "not-json"; sent: string }
  | { reason: "not-object"; sent: string; kind: string };

/** Where ingestion records each call's verdict (the run's maps, cleared per answer). */
export interface CallVerdicts {
  neverRun: Map<string, NeverRun>;
  /** Arguments as parsed from the model's bytes, by tool-call id. */
  parsedArgs: Map<string, unknown>;
}

/**
 * Normalizes each tool call's arguments once, at ingestion: what history replays is a JSON
 * object (`{}` when the model's bytes were not one), the model's bytes stay beside it as
 * `rawArguments`; calls of a cut-off answer and calls with non-object arguments are never run.
 * Every call leaves with an id of its own within the answer (a server may send none, or repeat one).
 */
export function ingestCalls(run: CallVerdicts, msg: AssistantMessage, raw: Map<number, string>): void {
  // Verdicts are per answer: a server that numbers its ids per answer (`call_0` every time)
  // must not have an earlier answer's refusal or arguments applied to this one's call.
  run.neverRun.clear();
  run.parsedArgs.clear();
  const ids = new Set<string>();
  msg.content.forEach((block, index) => {
    if (block.type !== "toolCall") return;
    // A call without an id (or with one another call of this answer holds) gets its own, once
    // here, so the history replays it and no verdict or pick lands on another call.
    if (block.id === "" || ids.has(block.id)) block.id = uniqueId(block.id, index, ids);
    ids.add(block.id);
    const text = raw.get(index) ?? "";
    const reading = normalizeArguments(text);
    block.arguments = reading.value;
    (block as { rawArguments?: string }).rawArguments = text;
    if (msg.stopReason === "length") run.neverRun.set(block.id, { reason: "truncated" });
    else if (reading.kind === "not-json") run.neverRun.set(block.id, { reason: "not-json", sent: text });
    else if (reading.kind === "not-object")
      run.neverRun.set(block.id, { reason: "not-object", sent: text, kind: reading.sent });
    else run.parsedArgs.set(block.id, reading.value);
  });
}

/** `<id>_<index>` (`call_<index>` for no id), suffixed further until no call of the answer holds it. */
function uniqueId(id: string, index: number, taken: ReadonlySet<string>): string {
  let candidate = `${id || "call"}_${index}`;
  while (taken.has(candidate)) candidate = `${candidate}_`;
  return candidate;
}
