/**
 * Strict parsing of the objects an outside party sends whole (run input, a Gate's payload):
 * an unknown key is refused, naming it and the accepted keys, as the published JSON Schema
 * (`additionalProperties: false`) promises. Pick arguments stay lenient (ADR-0052).
 * @see SPEC §4.1, §6
 */
import type { z } from "zod";

/** One refusal reason, as the 400 answers carry them in `issues`. */
export interface StrictIssue {
  path: string[];
  message: string;
  code: string;
}

/**
 * Parses `value` with `schema` made strict at its top level (the author's object; nested
 * objects keep their own mode).
 * @returns the parsed data, or the issues (an unknown key reads "unknown key `k`; accepted keys: a, b")
 */
export function parseStrict(
  schema: z.ZodObject,
  value: unknown,
): { ok: true; data: unknown } | { ok: false; issues: StrictIssue[] } {
  const parsed = schema.strict().safeParse(value);
  if (parsed.success) return { ok: true, data: parsed.data };
  const accepted = Object.keys(schema.shape);
  const acceptedText = accepted.length > 0 ? accepted.join(", ") : "(none)";
  const issues = parsed.error.issues.map((issue) => ({
    path: issue.path.filter((p) => typeof p !== "symbol").map(String),
    message:
      issue.code === "unrecognized_keys"
        ? `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `\`${k}\``).join(", ")}; accepted keys: ${acceptedText}`
        : issue.message,
    code: issue.code,
  }));
  return { ok: false, issues };
}
