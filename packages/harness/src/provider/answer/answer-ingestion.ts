import type { AssistantMessage } from "@mariozechner/pi-ai";
import { normalizeArguments } from "../replay/replay-lint.js";
import { wellFormedText, wellFormedValue } from "../replay/well-formed.js";

/**
 * Ingestion of a finished answer (before pi sees it): tool-call arguments normalized once, the
 * model's bytes kept beside them, each call given an id unique in the conversation, and each
 * call's verdict (run or never run) recorded on the run.
 * @see SPEC §7.2; docs/adr/0402-replayed-history.md, docs/adr/0404-hostile-streams.md
 */

/**
 * Why a tool call is not run: from ingestion (`truncated`, `not-json`, `not-object`,
 * `duplicate` — the same call earlier in the same answer) or later.
 */
export type NeverRun =
  | { reason: "truncated" }
  | { reason: "not-json"; sent: string }
  | { reason: "not-object"; sent: string; kind: string }
  | { reason: "duplicate" }
  | { reason: "merged"; count: number };

/** Where ingestion records each call's verdict (the run's maps, cleared per answer). */
export interface CallVerdicts {
  neverRun: Map<string, NeverRun>;
  /** Arguments as parsed from the model's bytes, by tool-call id. */
  parsedArgs: Map<string, unknown>;
  /** Every tool-call id the conversation holds (the seat's; grows, never cleared). */
  callIds: Set<string>;
}

/** A call's identity for "the same call" (issue 25): tool name and normalized arguments. */
export function callKey(name: string, args: unknown): string {
  return `${name}\u0000${JSON.stringify(args)}`;
}

/**
 * Normalizes each tool call's arguments once, at ingestion: what history replays is a JSON
 * object (`{}` when the model's bytes were not one) of well-formed strings (a lone surrogate
 * becomes U+FFFD, as in the answer's text and tool names: issue 25 §8), the model's bytes stay
 * beside it as `rawArguments` (the transcript only); calls of a cut-off answer and calls with non-object arguments are never run,
 * nor a call identical (name and normalized arguments) to one earlier in the same answer.
 * Every call leaves with an id no other call of the conversation holds (a server may send none,
 * one constant id, or number them per answer); the server's id stays beside it as `serverId`,
 * so the replay and the pick's idempotency key (ADR-0252) never confuse two calls.
 */
export function ingestCalls(run: CallVerdicts, msg: AssistantMessage, raw: Map<number, string>): void {
  // Verdicts are per answer: a server that numbers its ids per answer (`call_0` every time)
  // must not have an earlier answer's refusal or arguments applied to this one's call.
  run.neverRun.clear();
  run.parsedArgs.clear();
  const seen = new Set<string>();
  msg.content.forEach((block, index) => {
    // Lone surrogates become U+FFFD in all the model wrote (issue 25 §8, well-formed.ts).
    if (block.type === "text") block.text = wellFormedText(block.text);
    if (block.type === "thinking") block.thinking = wellFormedText(block.thinking);
    if (block.type !== "toolCall") return;
    block.name = wellFormedText(block.name);
    if (block.id === "" || run.callIds.has(block.id)) {
      const serverId = block.id;
      block.id = uniqueId(serverId, index, run.callIds);
      if (serverId !== "") (block as { serverId?: string }).serverId = serverId;
    }
    run.callIds.add(block.id);
    const text = raw.get(index) ?? "";
    const read = normalizeArguments(text);
    const reading = read.kind === "object" ? { ...read, value: wellFormedValue(read.value) } : read;
    block.arguments = reading.value;
    (block as { rawArguments?: string }).rawArguments = text;
    const key = callKey(block.name, reading.kind === "object" ? reading.value : `raw:${text}`);
    const duplicate = seen.has(key);
    seen.add(key);
    // pi-ai (patched, docs/upstream/pi-ai-tool-call-index.patch) counts calls it could not tell apart.
    const merged = (block as { mergedCalls?: number }).mergedCalls ?? 1;
    if (merged > 1) run.neverRun.set(block.id, { reason: "merged", count: merged });
    else if (msg.stopReason === "length") run.neverRun.set(block.id, { reason: "truncated" });
    else if (reading.kind === "not-json")
      run.neverRun.set(block.id, { reason: "not-json", sent: wellFormedText(text) });
    else if (reading.kind === "not-object")
      run.neverRun.set(block.id, { reason: "not-object", sent: wellFormedText(text), kind: reading.sent });
    else if (duplicate) run.neverRun.set(block.id, { reason: "duplicate" });
    else run.parsedArgs.set(block.id, reading.value);
  });
}

/** `<id>_<index>` (`call_<index>` for no id), suffixed further until no call of the conversation holds it. */
function uniqueId(id: string, index: number, taken: ReadonlySet<string>): string {
  let candidate = `${id || "call"}_${index}`;
  let n = 1;
  while (taken.has(candidate)) candidate = `${id || "call"}_${index}_${n++}`;
  return candidate;
}
