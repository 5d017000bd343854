/**
 * The model-facing texts the SPEC and the seed records fix, copied here on purpose: the tier
 * reads what a model read, from the outside, and imports nothing from the Harness (§2: the
 * conformance tier uses the binaries only). Where the SPEC fixes only the meaning of a receipt,
 * the tier matches the words that carry that meaning.
 * @see SPEC §5.7, §7.3, §7.4, §7.5; seed ADR-0029, ADR-0016
 */

/** The nudge's opening sentence, exactly (§5.7). */
export const NUDGE_TEXT = "Your previous turn ended, and the workflow is still waiting for your pick.";

/** The restatement's opening, inside `<jr2-turn>` (§7.5). */
export const RESTATEMENT_OPENING =
  "<jr2-turn>The workflow's state changed since you last read the Allowed picks.";

/** The correction receipt's body after the pick's name, exactly (§7.4, ADR-0029). */
export const NOT_ALLOWED_TAIL =
  " is not allowed in the workflow's current state, whatever its arguments. Your turn is not over. Do not repeat this call — pick one of the allowed tools.";

/** The turn-over receipt of a pick that moved the workflow on (§7.4), exactly. */
export function turnOverReceipt(pick: string): string {
  return `Delivered "${pick}". The workflow moved on; your turn is over. Call no further tool.`;
}

const NAME = "[A-Za-z0-9_-]{1,64}";
const ALLOWED_LINE = new RegExp(`Allowed now: (none\\.|${NAME}(?:, ${NAME})*\\.)`, "g");

/**
 * The newest Allowed-picks list stated in `text` (§7.3): names in the order written, `[]` for
 * `Allowed now: none.`, `undefined` when the text states none.
 */
export function lastAllowedList(text: string): string[] | undefined {
  let last: string | undefined;
  for (const match of text.matchAll(ALLOWED_LINE)) last = match[1];
  if (last === undefined) return undefined;
  return last === "none." ? [] : last.slice(0, -1).split(", ");
}

/** Does `text` end (last non-empty line, `</jr2-turn>` aside) with an Allowed-picks line? */
export function endsWithAllowedLine(text: string): boolean {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && l !== "</jr2-turn>");
  const last = lines.at(-1) ?? "";
  return new RegExp(`^Allowed now: (none\\.( .*)?|${NAME}(?:, ${NAME})*\\.)$`).test(last);
}

/** Two Allowed-picks lists compared as sets (§7.5). */
export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((n) => sb.has(n));
}

/** The Working tools' names (§1, §3.1): never Menu tools. */
export const WORKING_TOOL_NAMES: ReadonlySet<string> = new Set([
  "read",
  "write",
  "edit",
  "bash",
  "grep",
  "find",
  "ls",
]);
