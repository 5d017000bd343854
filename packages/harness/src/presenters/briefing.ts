import type { Notice } from "@jr2/wire";
import { allowedLine, NUDGE_TEXT, noticeLine, STANDING_PART } from "./menu.js";

/**
 * The Briefing (§7.3): the standing part in the system prompt, the Turn part in the newest user
 * message. Pure functions of their inputs, so the same seat renders the same bytes.
 * @see SPEC §7.3, §5.7
 */

/** The system prompt: the Agent's instructions, then the standing part. Byte-stable per seat. */
export function systemPrompt(instructions: string): string {
  return instructions.length > 0 ? `${instructions}\n\n${STANDING_PART}` : STANDING_PART;
}

/** What the Turn part says: the working directory (Working tools only), notices, Allowed picks. */
export interface TurnPartInput {
  cwd: string | undefined;
  notices: readonly Notice[];
  allowed: readonly string[];
  menuOrder: readonly string[];
}

/** `<jr2-turn>` … `</jr2-turn>`: cwd line, one line per notice, the Allowed line last. */
export function turnPart(input: TurnPartInput): string {
  const lines = ["<jr2-turn>"];
  if (input.cwd !== undefined) lines.push(`Working directory: ${input.cwd}`);
  for (const notice of input.notices) lines.push(noticeLine(notice));
  lines.push(allowedLine(input.allowed, input.menuOrder), "</jr2-turn>");
  return lines.join("\n");
}

/**
 * The Submission's user message: the Frame's prompt (task) or the nudge sentence, then the
 * Turn part — after the prompt, never before it (§7.2 step 3).
 */
export function userMessageText(kind: "task" | "nudge", prompt: string | undefined, part: string): string {
  const head = kind === "nudge" ? NUDGE_TEXT : (prompt ?? "");
  return `${head}\n\n${part}`;
}
