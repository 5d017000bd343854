/**
 * The one escaping of model-written text for a terminal or a log line (issue 25 §7, issue 24 §8):
 * tool names from any source (the Menu, Working tools, MCP, external agents), arguments, text,
 * reasons and fault details a model or its server wrote. A terminal acts on some characters
 * instead of showing them, so each is written as a visible escape instead:
 * - newline `\n`, carriage return `\r`, tab `\t` (a newline in a tool name forged a whole
 *   `pick … moved, turn complete` line in `jr2 follow`);
 * - every other C0 control, DEL and the C1 controls (U+0080–U+009F) as `\xHH` (ESC starts ANSI
 *   and OSC sequences: colours, a retitled terminal, an OSC 8 link, a cleared screen; U+009B is
 *   a one-character CSI);
 * - the bidi controls U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069 and the line and
 *   paragraph separators U+2028/U+2029 as `\u{XXXX}` (a right-to-left override reorders what
 *   follows it on the line: Trojan-Source).
 * Backslashes are left as they are: the escape is for safety, not a reversible encoding (the raw
 * text stays in the transcript's `--json` and the API). Pure: a function of its input.
 */

/** Everything escaped: C0, DEL, C1, bidi controls, U+2028/U+2029. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: escaping them is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same, but newline and tab are kept (a text block a terminal prints over several lines). */
const UNSAFE_KEEP_LINES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escaping them is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escapeOne(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const code = c.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u{${code.toString(16).toUpperCase()}}`;
}

/**
 * `text` with every character a terminal would act on written as a visible escape (see the
 * module). `lines: "keep"` keeps newline and tab (a CRLF reads as a newline) — for a block of text printed indented under a
 * label (a model's answer, reasoning, arguments), where each line starts with jr2's indent and so
 * cannot pass for a line of jr2's own; anything printed inside one line (a name, a reason, a
 * detail) uses the default, which escapes them too.
 * @param text - any string; non-strings are not accepted (callers `String()` them first)
 * @returns the escaped text; the same string when nothing needed escaping
 */
export function escapeModelText(text: string, options: { lines?: "escape" | "keep" } = {}): string {
  // A CRLF line end is a line end in a block (Windows-style text), not a stray `\r` to show.
  if (options.lines === "keep") return text.replace(/\r\n/g, "\n").replace(UNSAFE_KEEP_LINES, escapeOne);
  return text.replace(UNSAFE, escapeOne);
}
