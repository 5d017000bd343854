/**
 * Replayed text is always well-formed UTF-8 (issue 25 §8). A model's JSON may carry a lone
 * surrogate as an escape (`"\ud800"` in a tool call's arguments or a content delta): JavaScript
 * keeps it as a lone UTF-16 unit, and sent back it is no valid UTF-8 — a real server's tokenizer
 * refuses the request, and every later request of the conversation with it. At ingestion each
 * lone surrogate becomes U+FFFD (the replacement character) in the answer's text, reasoning, tool
 * names and parsed arguments — so in the replay and in the pick delivered to the Machine; the
 * model's raw argument bytes stay only in the transcript (`rawArguments`, as ADR-0402 keeps
 * non-object arguments). The replay-lint checks every request for any that slipped past.
 */

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const HAS_LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** `text` with every lone surrogate replaced by U+FFFD; the same string when it has none. */
export function wellFormedText(text: string): string {
  return HAS_LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATE, "\uFFFD") : text;
}

/** Whether `text` holds a lone surrogate. */
export function hasLoneSurrogate(text: string): boolean {
  return HAS_LONE_SURROGATE.test(text);
}

/** A JSON value with every string (object keys included) made well-formed; the same value when nothing changed. */
export function wellFormedValue<T>(value: T): T {
  if (typeof value === "string") return wellFormedText(value) as T;
  if (Array.isArray(value)) {
    const out = value.map((v) => wellFormedValue(v));
    return (out.some((v, i) => v !== value[i]) ? out : value) as T;
  }
  if (value !== null && typeof value === "object") {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const key = wellFormedText(k);
      const val = wellFormedValue(v);
      if (key !== k || val !== v) changed = true;
      out[key] = val;
    }
    return (changed ? out : value) as T;
  }
  return value;
}
