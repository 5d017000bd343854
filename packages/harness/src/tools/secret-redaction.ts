/**
 * Redaction of the Harness's own secret values from Working-tool results (issue 11 "Secrets",
 * ADR-0158): built once from the values, it replaces every occurrence with {@link REDACTED}
 * before the model, the stream or a log sees a result. Pure; no regular expressions built
 * from secret text (nothing to escape, nothing to backtrack on).
 */

/** What an occurrence of a secret becomes. */
export const REDACTED = "[redacted]";

/**
 * Values shorter than this are not redacted: `EMPTY` or `none` (vLLM's and llama-server's
 * conventional keys) would mangle ordinary output and protect nothing.
 */
export const MIN_SECRET_LENGTH = 8;

/** Redacts a fixed set of secret values. */
export interface Redactor {
  /** How many distinct strings it looks for (each value and its JSON- and URL-escaped forms). */
  readonly size: number;
  /**
   * `text` with every occurrence of a secret replaced by `[redacted]`. Occurrences that
   * overlap (one secret inside another, or two sharing characters) become one `[redacted]`,
   * so no fragment of either is left.
   */
  redact(text: string): string;
  /** True when `text` holds any secret. */
  holds(text: string): boolean;
  /**
   * A JSON-like value with every string in it (at any depth of arrays and plain objects)
   * redacted; other values are returned as they were. A new value when anything changed.
   */
  redactValue<T>(value: T): T;
}

/**
 * A redactor for `values`: each value of at least {@link MIN_SECRET_LENGTH} characters, plus
 * its JSON-string form (a key read out of a JSON file or `JR2_MODELS` with `"` or `\` in it)
 * and its URL-encoded form (a key in a query string) when they differ.
 * @example createRedactor(["sk-0123456789"]).redact("key=sk-0123456789") // "key=[redacted]"
 * @see ADR-0158
 */
export function createRedactor(values: Iterable<string>): Redactor {
  const secrets = secretForms(values);
  const redact = (text: string): string => (secrets.length === 0 ? text : replaceSpans(text, secrets));
  const holds = (text: string): boolean => secrets.some((s) => text.includes(s));
  return {
    size: secrets.length,
    redact,
    holds,
    redactValue: <T>(value: T): T => (secrets.length === 0 ? value : (mapStrings(value, redact, 0) as T)),
  };
}

/** The distinct strings to look for, longest first. */
function secretForms(values: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const value of values) {
    if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH) continue;
    forms.add(value);
    forms.add(JSON.stringify(value).slice(1, -1));
    forms.add(encodeURIComponent(value));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** `text` with the union of every secret's occurrences replaced, one `[redacted]` per run. */
function replaceSpans(text: string, secrets: readonly string[]): string {
  const spans = mergedSpans(occurrences(text, secrets));
  if (spans.length === 0) return text;
  let out = "";
  let at = 0;
  for (const [start, end] of spans) {
    out += text.slice(at, start) + REDACTED;
    at = end;
  }
  return out + text.slice(at);
}

/** Every [start, end) where a secret occurs, overlapping occurrences included. */
function occurrences(text: string, secrets: readonly string[]): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (const secret of secrets) {
    for (let i = text.indexOf(secret); i !== -1; i = text.indexOf(secret, i + 1)) {
      spans.push([i, i + secret.length]);
    }
  }
  return spans;
}

/** Spans sorted and merged where they overlap. */
function mergedSpans(spans: Array<[number, number]>): Array<[number, number]> {
  spans.sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const [start, end] of spans) {
    const last = merged[merged.length - 1];
    if (last && start < last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}

/**
 * Tool details are small JSON-like records; anything nested deeper (or a cycle) is not one of
 * pi's and is replaced whole rather than passed on unread.
 */
const MAX_DEPTH = 32;

function mapStrings(value: unknown, f: (s: string) => string, depth: number): unknown {
  if (typeof value === "string") return f(value);
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = mapStrings(v, f, depth + 1);
  return out;
}

/**
 * `base` plus more secret values: a conversation's MCP header secrets (issue 29), resolved by
 * name from the Harness's environment whatever that name says, redacted like the Harness's own.
 */
export function withSecretValues(base: Redactor, values: Iterable<string>): Redactor {
  const extra = createRedactor(values);
  if (extra.size === 0) return base;
  const redact = (text: string) => extra.redact(base.redact(text));
  return {
    size: base.size + extra.size,
    redact,
    holds: (text) => base.holds(text) || extra.holds(text),
    redactValue: <T>(value: T): T => extra.redactValue(base.redactValue(value)),
  };
}
