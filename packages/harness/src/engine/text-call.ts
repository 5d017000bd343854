/**
 * A tool call written as text (issue 10 §3, case C1): Hermes-style `<tool_call>` markup in an
 * answer's content while the answer carries no structured `tool_calls` — what a server without
 * a tool-call parser (vLLM without `--enable-auto-tool-choice --tool-call-parser hermes`) sends.
 * The markup is never parsed and never delivered: the Submission settles `textCall: true` and the
 * Orchestrator nudges with the `text-call` notice.
 * @see SPEC §5.6 (cause `text-call`)
 */

/** `<tool_call>` (Hermes, Qwen3) or `<function=` (Qwen3-Coder's XML form) in the text. */
const MARKUP = /<tool_call>|<function=[A-Za-z0-9_-]+>/;

/** Whether an answer with no structured tool calls wrote one out as text. */
export function isTextCall(text: string): boolean {
  return MARKUP.test(text);
}
