/**
 * Every model-facing text `menu.ts` renders (issue 23, "Bytes unchanged"), each export called
 * with fixed arguments that reach each of its branches: name → text. `model-bytes.ts` already
 * pins the texts per example Agent; this covers the rest of menu.ts (every notice, every receipt
 * class, the cut-off, not-JSON, not-object, not-run and Working-tool texts), so that a move that
 * loses or alters one branch fails `menu-texts-unchanged.test.ts`. `MENU_EXPORTS` lists every
 * export the texts below exercise; the test fails on an export that is not listed.
 */
import type { Notice, TolerantPickAnswer } from "@jr2/wire";
import * as menu from "../../src/presenters/menu.js";

const ORDER = ["finish", "dispute", "approve"] as const;

/** Every export of menu.ts the texts call (a new export must be added here and pinned). */
export const MENU_EXPORTS = [
  "STANDING_PART",
  "NUDGE_TEXT",
  "inMenuOrder",
  "allowedLine",
  "restatement",
  "noticeLine",
  "receipt",
  "unknownToolReceipt",
  "TURN_GONE_RECEIPT",
  "pickInTransitReceipt",
  "truncatedCallReceipt",
  "SENT_QUOTE_LIMIT",
  "argumentsNotJsonReceipt",
  "argumentsNotObjectReceipt",
  "outputCutRestatement",
  "NOT_RUN_TURN_OVER",
  "NOT_RUN_STOPPED",
  "NOT_RUN_DUPLICATE",
  "NOT_RUN_MERGED",
  "workingToolArgumentsReceipt",
  "outsideCwdReceipt",
  "workingToolFailed",
  "repeatedCallNote",
  // Issue 29: MCP tools' receipts (new texts, pinned in the commit that adds them).
  "mcpToolGoneReceipt",
  "mcpServerDownReceipt",
  "mcpCallFailedReceipt",
  "mcpResultCutNote",
] as const;

const answers: Record<string, TolerantPickAnswer> = {
  "over-moved": { delivered: true, moved: true, turnComplete: true },
  "over-legacy-delivered": { delivered: true, turnComplete: true },
  "over-not-moved": { delivered: true, moved: false, turnComplete: true },
  busy: { delivered: false, refusal: "busy", turnComplete: false, allowed: [] },
  "invalid-fields": {
    delivered: false,
    refusal: "invalid-arguments",
    turnComplete: false,
    issues: [
      { path: ["summary"], message: "Required" },
      { path: [], message: "Expected object" },
    ],
    allowed: ["finish", "approve"],
  },
  "invalid-none": {
    delivered: false,
    refusal: "invalid-arguments",
    turnComplete: false,
    allowed: ["finish"],
  },
  "off-menu": { delivered: false, refusal: "off-menu", turnComplete: false, allowed: ["dispute"] },
  "stays-moved": { delivered: true, moved: true, turnComplete: false, allowed: ["approve", "finish"] },
  "guard-refused": { delivered: true, moved: false, turnComplete: false, allowed: ["finish"] },
  "not-allowed": { delivered: true, moved: false, turnComplete: false, allowed: ["dispute"] },
  "legacy-open": { delivered: true, turnComplete: false },
} as unknown as Record<string, TolerantPickAnswer>;

const notices = [
  { type: "conversation-new" },
  { type: "readmitted" },
  { type: "text-call" },
  ...Object.entries(answers).map(([, answer]) => ({ type: "pick-answer", pick: "finish", answer })),
  // Appended (issue 25 §4), so the earlier keys keep their numbers.
  { type: "text-call", where: "reasoning" },
  { type: "unparsable-output" },
] as unknown as Notice[];

const allowedSets: Array<readonly string[] | undefined> = [undefined, [], ["approve", "finish"]];
const key = (a: readonly string[] | undefined) => (a === undefined ? "unknown" : a.join("+") || "none");

/** name → text, for every branch of every export in MENU_EXPORTS. */
export function menuTexts(): Record<string, string> {
  const t: Record<string, string> = {
    STANDING_PART: menu.STANDING_PART,
    NUDGE_TEXT: menu.NUDGE_TEXT,
    TURN_GONE_RECEIPT: menu.TURN_GONE_RECEIPT,
    NOT_RUN_TURN_OVER: menu.NOT_RUN_TURN_OVER,
    NOT_RUN_STOPPED: menu.NOT_RUN_STOPPED,
    NOT_RUN_DUPLICATE: menu.NOT_RUN_DUPLICATE,
    NOT_RUN_MERGED: menu.NOT_RUN_MERGED,
    SENT_QUOTE_LIMIT: String(menu.SENT_QUOTE_LIMIT),
    inMenuOrder: JSON.stringify(menu.inMenuOrder(["approve", "ghost", "finish"], ORDER)),
    pickInTransitReceipt: menu.pickInTransitReceipt("finish"),
    workingToolArgumentsReceipt: menu.workingToolArgumentsReceipt("read", [
      "path: Required",
      "limit: number",
    ]),
    outsideCwdReceipt: menu.outsideCwdReceipt("write", "/etc/passwd", "/workspace/x"),
    workingToolFailed: menu.workingToolFailed("bash", "exit 1"),
    repeatedCallNote: menu.repeatedCallNote("ls", 3),
  };
  for (const a of allowedSets) {
    const k = key(a);
    if (a !== undefined) {
      t[`allowedLine/${k}`] = menu.allowedLine(a, ORDER);
      t[`restatement/${k}`] = menu.restatement(a, ORDER);
    }
    t[`unknownToolReceipt/${k}`] = menu.unknownToolReceipt("ghost", a, ORDER);
    t[`truncatedCallReceipt/${k}`] = menu.truncatedCallReceipt("finish", a, ORDER);
    t[`argumentsNotJsonReceipt/${k}/empty`] = menu.argumentsNotJsonReceipt("finish", a, ORDER);
    t[`argumentsNotJsonReceipt/${k}/short`] = menu.argumentsNotJsonReceipt("finish", a, ORDER, "{summary:");
    t[`argumentsNotJsonReceipt/${k}/long`] = menu.argumentsNotJsonReceipt(
      "finish",
      a,
      ORDER,
      "x".repeat(260),
    );
    t[`argumentsNotObjectReceipt/${k}`] = menu.argumentsNotObjectReceipt(
      "finish",
      { sent: '"{\\"summary\\":\\"s\\"}"', kind: "a string" },
      a,
      ORDER,
    );
    t[`outputCutRestatement/${k}`] = menu.outputCutRestatement(a, ORDER);
  }
  t.mcpToolGoneReceipt = menu.mcpToolGoneReceipt("mcp__github__x");
  t.mcpServerDownReceipt = menu.mcpServerDownReceipt("mcp__github__x", "github", "connect ECONNREFUSED");
  t.mcpCallFailedReceipt = menu.mcpCallFailedReceipt("mcp__github__x", "not found");
  t.mcpResultCutNote = menu.mcpResultCutNote(32768, 100000);
  for (const [k, answer] of Object.entries(answers))
    t[`receipt/${k}`] = menu.receipt("finish", answer, ORDER);
  notices.forEach((n, i) => {
    t[`noticeLine/${i}-${n.type}`] = menu.noticeLine(n);
  });
  return t;
}
