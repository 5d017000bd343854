/**
 * The history every request replays is valid for every server and template (issue 10 §1):
 * - tool-call `arguments` are normalized once, at ingestion ({@link normalizeArguments}), so
 *   what is replayed is always a JSON object;
 * - an answer pi-ai would drop (empty, reasoning-only, errored or aborted) is replayed as
 *   `{"role":"assistant","content":""}`, so two user messages never sit side by side and are
 *   never merged ({@link EMPTY_ANSWER_MARK}, {@link lintPayload});
 * - the replay-lint checks every request the Harness sends: in tests a violation throws (the
 *   test fails), in production it is logged at error and repaired, never thrown;
 * - every text replayed is well-formed UTF-8: a lone surrogate left in a message's content or a
 *   call's name or arguments is a violation (ingestion makes it U+FFFD: well-formed.ts).
 * @see docs/adr/0402-replayed-history.md; cases C6, C7
 */

import { hasLoneSurrogate, wellFormedText, wellFormedValue } from "./well-formed.js";

/** What the model sent as a call's arguments, read once. */
export type ArgumentsReading =
  | { kind: "object"; value: Record<string, unknown> }
  /** JSON, but not an object: a string (often an object encoded twice), number, array, … */
  | { kind: "not-object"; value: Record<string, never>; sent: string }
  | { kind: "not-json"; value: Record<string, never> };

/**
 * Reads a call's raw argument text. Empty text is a call without arguments (`{}`); JSON that is
 * not an object, and text that is not JSON (truncated, garbage), read as `{}` plus why.
 */
export function normalizeArguments(raw: string): ArgumentsReading {
  const text = raw.trim();
  if (text === "") return { kind: "object", value: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: "not-json", value: {} };
  }
  if (isPlainObject(parsed)) return { kind: "object", value: parsed };
  return { kind: "not-object", value: {}, sent: jsonKind(parsed) };
}

/** `a JSON string`, `a JSON number`, `a JSON array`, … */
function jsonKind(v: unknown): string {
  if (v === null) return "JSON null";
  if (Array.isArray(v)) return "a JSON array";
  return `a JSON ${typeof v}`;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Stands in for a dropped answer's text between convertToLlm and the payload: pi-ai drops an
 * assistant message without text or tool calls, so the seat gives it this text and
 * {@link lintPayload} turns it into `""` (a NUL never comes from a model's text).
 */
export const EMPTY_ANSWER_MARK = "\u0000jr2:empty-answer\u0000";

/** `strict`: a violation throws (tests); `repair`: logged at error and repaired (production). */
export type LintMode = "strict" | "repair";

/** Strict under vitest or `JR2_REPLAY_LINT=strict`; repair otherwise. */
export function lintModeFromEnv(env: NodeJS.ProcessEnv = process.env): LintMode {
  return env.JR2_REPLAY_LINT === "strict" || (env.VITEST !== undefined && env.JR2_REPLAY_LINT !== "repair")
    ? "strict"
    : "repair";
}

interface WireMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: Array<{ function?: { arguments?: unknown } }>;
  [k: string]: unknown;
}

/**
 * Shapes and checks one request body in place: the empty-answer mark becomes
 * `{"role":"assistant","content":""}` (and nothing else of that message is sent); then every
 * assistant `tool_calls[].function.arguments` must parse to a JSON object and no two user
 * messages may be adjacent.
 * @returns the problems found (already repaired in `repair` mode).
 * @throws Error in `strict` mode, naming the message index and the problem.
 */
export function lintPayload(params: { messages?: unknown }, mode: LintMode): string[] {
  const messages = Array.isArray(params.messages) ? (params.messages as WireMessage[]) : [];
  const problems: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as WireMessage;
    if (m.role === "assistant" && m.content === EMPTY_ANSWER_MARK)
      messages[i] = { role: "assistant", content: "" };
  }
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as WireMessage;
    if (typeof m.content === "string" && m.content.includes(EMPTY_ANSWER_MARK)) {
      problems.push(`message ${i}: the empty-answer mark leaked into its content`);
      m.content = m.content.split(EMPTY_ANSWER_MARK).join("");
    }
    if (m.role === "user" && (messages[i - 1] as WireMessage | undefined)?.role === "user") {
      problems.push(`messages ${i - 1} and ${i}: two user messages in a row`);
      messages.splice(i, 0, { role: "assistant", content: "" });
      i++;
    }
    lintSurrogates(m, i, problems);
    if (m.role !== "assistant" || !Array.isArray(m.tool_calls)) continue;
    m.tool_calls.forEach((tc, j) => {
      const args = tc.function?.arguments;
      let ok = false;
      try {
        ok = typeof args === "string" && isPlainObject(JSON.parse(args));
      } catch {
        ok = false;
      }
      if (ok || !tc.function) return;
      problems.push(`message ${i}, tool call ${j}: arguments do not parse to a JSON object`);
      tc.function.arguments = "{}";
    });
  }
  if (problems.length > 0 && mode === "strict")
    throw new Error(`replay-lint: the request's history is not valid: ${problems.join("; ")}`);
  return problems;
}

/**
 * A lone surrogate in a message's content (a string or text parts), or in a call's name or
 * arguments (after JSON decoding: `"\ud800"` is one), is a problem; repaired to U+FFFD.
 */
function lintSurrogates(m: WireMessage, i: number, problems: string[]): void {
  const found = (where: string) =>
    problems.push(`message ${i}: a lone surrogate in ${where} (not valid UTF-8)`);
  if (typeof m.content === "string" && hasLoneSurrogate(m.content)) {
    found("its content");
    m.content = wellFormedText(m.content);
  } else if (Array.isArray(m.content)) {
    for (const part of m.content as Array<{ text?: unknown }>) {
      if (typeof part?.text !== "string" || !hasLoneSurrogate(part.text)) continue;
      found("its content");
      part.text = wellFormedText(part.text);
    }
  }
  for (const [j, tc] of (Array.isArray(m.tool_calls) ? m.tool_calls : []).entries()) {
    const fn = tc.function as { name?: unknown; arguments?: unknown } | undefined;
    if (typeof fn?.name === "string" && hasLoneSurrogate(fn.name)) {
      found(`tool call ${j}'s name`);
      fn.name = wellFormedText(fn.name);
    }
    if (typeof fn?.arguments !== "string") continue;
    let value: unknown;
    try {
      value = JSON.parse(fn.arguments);
    } catch {
      continue; // not JSON: the arguments check above reports and repairs it
    }
    const fixed = wellFormedValue(value);
    if (fixed === value) continue;
    found(`tool call ${j}'s arguments`);
    fn.arguments = JSON.stringify(fixed);
  }
}
