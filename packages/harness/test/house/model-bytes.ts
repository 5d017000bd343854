/**
 * The bytes the Harness sends the model for each example Agent (issue 14, "Bytes unchanged"):
 * the tools block (menu-tools.ts `presentedTools`), the Briefing (briefing.ts `systemPrompt`,
 * `turnPart`, `userMessageText`) and menu.ts's Allowed line, restatement, nudge, notice lines
 * and receipts, for a fixed Turn. `modelBytesNow` hashes them from the source of the tree it
 * runs in; `model-bytes-pin.json` holds them as on main before the house (ef9ea94), written by
 * `write-model-bytes.ts` (its header says how). Only functions that exist at ef9ea94 are used.
 */
import { createHash } from "node:crypto";
import type { AgentDefinition, Notice, TolerantPickAnswer, Tool } from "@jr2/wire";
import { systemPrompt, turnPart, userMessageText } from "../../src/presenters/briefing.js";
import {
  allowedLine,
  NUDGE_TEXT,
  noticeLine,
  receipt,
  restatement,
  STANDING_PART,
  unknownToolReceipt,
} from "../../src/presenters/menu.js";
import { presentedTools } from "../../src/presenters/pi/menu-tools.js";
import { createWorkingTools } from "../../src/tools/working-tools.js";

/** `workflow[/machine path]/agent` → that Agent's definition and Menu (example-menus.json). */
export type ExampleMenus = Record<string, { definition: AgentDefinition; menu: Tool[] }>;

/**
 * The fixed Turn every text is rendered for. The Briefing carries no ids (menu.ts), so `iid`
 * and `turnId` only name the Turn; the prompt and the working directory are in the bytes.
 */
export const PIN_TURN = {
  iid: "house-pin-iid",
  turnId: "house-pin-turn-1",
  prompt: "Do the task of this step, then end your turn with a pick.",
  cwd: "/workspace/house-pin",
} as const;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * The Working tools for an access level. ef9ea94's `createWorkingTools(access, cwd)` has no
 * redactor; today's takes one (results only, never the presented bytes): the adapter passes an
 * empty one where the module exists.
 */
async function workingTools(access: AgentDefinition["workspace"], cwd: string) {
  const redaction = await import("../../src/tools/secret-redaction.js").catch(() => undefined);
  const secrets = redaction?.createRedactor([]);
  return createWorkingTools(access, cwd, secrets as never);
}

/** One Agent's texts: name → text. */
async function agentTexts(definition: AgentDefinition, menu: Tool[]): Promise<Record<string, string>> {
  const order = menu.map((t) => t.name);
  const allowed = [...order].reverse(); // the Allowed line sorts into Menu order
  const working =
    definition.workspace === "none" ? [] : await workingTools(definition.workspace, PIN_TURN.cwd);
  const cwd = working.length > 0 ? PIN_TURN.cwd : undefined;
  const part = turnPart({ cwd, notices: [], allowed, menuOrder: order });
  const noneOpen = turnPart({ cwd, notices: [], allowed: [], menuOrder: order });
  const first = order[0] ?? "pick";
  return {
    tools: JSON.stringify(presentedTools(working, menu)),
    system: systemPrompt(definition.instructions),
    "turn-part": part,
    "turn-part-none": noneOpen,
    "user-task": userMessageText("task", PIN_TURN.prompt, part),
    "user-nudge": userMessageText("nudge", undefined, part),
    allowed: allowedLine(allowed, order),
    restatement: restatement(allowed, order),
    "receipt-stays": receipt(
      first,
      { delivered: true, moved: true, turnComplete: false, allowed } as TolerantPickAnswer,
      order,
    ),
    "receipt-unknown": unknownToolReceipt("no_such_tool", allowed, order),
  };
}

/** Texts that do not depend on an Agent: the standing part, the nudge, notices, receipts. */
function sharedTexts(): Record<string, string> {
  const notices: Notice[] = [
    { type: "conversation-new" },
    { type: "readmitted" },
    { type: "text-call" },
  ] as Notice[];
  const answers: Record<string, TolerantPickAnswer> = {
    moved: { delivered: true, moved: true, turnComplete: true },
    busy: { delivered: false, refusal: "busy", turnComplete: false, allowed: [] },
    invalid: {
      delivered: false,
      refusal: "invalid-arguments",
      turnComplete: false,
      issues: [{ path: ["summary"], message: "Required" }],
      allowed: ["finish"],
    },
    "not-moved": { delivered: true, moved: false, turnComplete: false, allowed: ["finish"] },
  } as unknown as Record<string, TolerantPickAnswer>;
  return {
    standing: STANDING_PART,
    nudge: NUDGE_TEXT,
    "turn-part-notices": turnPart({ cwd: PIN_TURN.cwd, notices, allowed: ["finish"], menuOrder: ["finish"] }),
    ...Object.fromEntries(notices.map((n) => [`notice-${n.type}`, noticeLine(n)])),
    ...Object.fromEntries(
      Object.entries(answers).map(([k, a]) => [`receipt-${k}`, receipt("finish", a, ["finish"])]),
    ),
  };
}

/** `<agent key>/<text>` and `shared/<text>` → sha256 of the text, keys sorted. */
export async function modelBytesNow(menus: ExampleMenus): Promise<Record<string, string>> {
  const texts: Record<string, string> = {};
  for (const [key, { definition, menu }] of Object.entries(menus))
    for (const [name, text] of Object.entries(await agentTexts(definition, menu)))
      texts[`${key}/${name}`] = text;
  for (const [name, text] of Object.entries(sharedTexts())) texts[`shared/${name}`] = text;
  return Object.fromEntries(
    Object.keys(texts)
      .sort()
      .map((k) => [k, sha256(texts[k]!)]),
  );
}
