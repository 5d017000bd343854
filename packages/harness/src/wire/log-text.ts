/**
 * The Harness's log lines carry model-written text escaped (issue 25 §7): a warn line naming a
 * tool a model invented, an argument or a server's error message goes through @jr2/wire's
 * `escapeModelText` — the one escaping the CLI uses — before pino writes it. pino's JSON already
 * escapes C0 controls, but not C1 controls nor bidi controls (a U+202E in a tool name would
 * reorder the line in any viewer), and a pretty-printed log would print a newline as one.
 */
import { escapeModelText } from "@jr2/wire";

/** `msg` and each string value of `fields` (one level: the Harness's log fields are flat) escaped. */
export function escapedLogLine(
  msg: string,
  fields: Record<string, unknown> | undefined,
): [Record<string, unknown>, string] {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields ?? {}))
    out[key] = typeof value === "string" ? escapeModelText(value) : value;
  return [out, escapeModelText(msg)];
}
