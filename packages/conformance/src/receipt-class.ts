import { NOT_ALLOWED_TAIL, turnOverReceipt } from "./texts.js";

/**
 * The receipt classes of §7.4, told apart by their text. A receipt is what a pick's tool
 * result says; `unknown` is a tool result for a Menu-or-invented tool that is none of them
 * (e.g. an engine's own default text, which §7.2 step 4 forbids).
 * @see SPEC §7.4
 */
export type ReceiptClass =
  | "turn-over"
  | "moved-in-state"
  | "not-allowed"
  | "change-arguments"
  | "busy"
  | "invalid-arguments"
  | "no-such-tool"
  | "turn-gone"
  | "delivered-unknown-move"
  | "in-transit"
  | "call-not-run"
  | "not-run-turn-over"
  | "unknown";

/** Every class a tier run can ask for, in §7.4 order. */
export const RECEIPT_CLASSES: readonly ReceiptClass[] = [
  "turn-over",
  "moved-in-state",
  "not-allowed",
  "change-arguments",
  "busy",
  "invalid-arguments",
  "no-such-tool",
  "turn-gone",
  "delivered-unknown-move",
  "in-transit",
  "call-not-run",
  "not-run-turn-over",
];

/**
 * Classifies one pick's tool-result text. `pick` is the called tool's name: the texts that the
 * SPEC fixes verbatim are matched verbatim with it; the others by the words carrying the meaning.
 */
export function classifyReceipt(pick: string, text: string): ReceiptClass {
  const head = text.split("\n")[0] ?? "";
  if (text === turnOverReceipt(pick)) return "turn-over";
  if (/^not run: your turn was already over/i.test(head)) return "not-run-turn-over";
  if (/was not run and nothing was delivered/i.test(head)) return "call-not-run";
  if (/may not have reached the workflow/i.test(head)) return "in-transit";
  if (head === `${pick}${NOT_ALLOWED_TAIL}`) return "not-allowed";
  if (/your turn is over/i.test(head) && /no open turn/i.test(head)) return "turn-gone";
  if (head.startsWith(`"${pick}" was answered, and your turn is over.`)) return "turn-over";
  if (/does not exist|there is no tool/i.test(head) && head.includes(pick)) return "no-such-tool";
  if (/is refused until|still working on/i.test(head) && /refused/i.test(head)) return "busy";
  if (/invalid/i.test(head) && /argument/i.test(head)) return "invalid-arguments";
  if (/change the arguments/i.test(head)) return "change-arguments";
  if (head.startsWith(`Delivered "${pick}".`) && /still in the state that asked for this turn/.test(head))
    return "moved-in-state";
  if (head.startsWith(`Delivered "${pick}".`) && /your turn is not over/i.test(head)) {
    return "delivered-unknown-move";
  }
  return "unknown";
}

/** Whether a class leaves the Turn open (so its receipt must end with the Allowed line, §7.4). */
export function leavesTurnOpen(kind: ReceiptClass): boolean {
  return (
    kind !== "turn-over" &&
    kind !== "turn-gone" &&
    kind !== "not-run-turn-over" &&
    kind !== "in-transit" &&
    kind !== "unknown"
  );
}
