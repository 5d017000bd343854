/**
 * The run feed's `tool-call` lines of a transcript answer (issue 11 item 1, ADR-0257): each
 * tool call the Harness ran (`working`), refused as invented or did not run becomes one line
 * with a short form of its raw arguments; picks have their own `pick` line.
 * @see SPEC §5.6
 */
import type { RunFeedEntry, TranscriptEntry } from "@jr2/wire";

/** How many characters of a call's raw arguments a feed line shows. */
export const TOOL_CALL_SUMMARY_CHARS = 200;

/** A `tool-call` feed entry without its `child` (the host adds it). */
export type ToolCallLine = Omit<Extract<RunFeedEntry, { type: "tool-call" }>, "child">;

/** The `tool-call` lines of `entry` (none unless it is an answer with non-pick calls). */
export function toolCallLines(entry: TranscriptEntry, agent: string): ToolCallLine[] {
  if (entry.kind !== "answer") return [];
  return entry.toolCalls.flatMap((call) =>
    call.disposition === "pick"
      ? []
      : [
          {
            type: "tool-call" as const,
            agent,
            name: call.name,
            summary: summarize(call.rawArguments),
            disposition: call.disposition,
            ...(call.reason === undefined ? {} : { reason: call.reason }),
          },
        ],
  );
}

/** At most {@link TOOL_CALL_SUMMARY_CHARS} characters of `raw`, whitespace runs folded, `…` when cut. */
export function summarize(raw: string): string {
  const flat = raw.replace(/\s+/g, " ").trim();
  const chars = [...flat];
  return chars.length <= TOOL_CALL_SUMMARY_CHARS
    ? flat
    : `${chars.slice(0, TOOL_CALL_SUMMARY_CHARS - 1).join("")}…`;
}
