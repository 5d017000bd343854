import { classifyReceipt, type ReceiptClass } from "./receipt-class.js";
import { type ChatMessage, contentText, type RequestBody } from "./request-body.js";
import { lastAllowedList, NUDGE_TEXT, RESTATEMENT_OPENING, WORKING_TOOL_NAMES } from "./texts.js";

/**
 * One message of a recorded conversation, read for what jr2 said in it (§5.7, §7.3–§7.5).
 * `allowed` is the Allowed-picks list it states (`undefined`: none stated).
 */
export type ReadMessage =
  | { index: number; kind: "system"; text: string }
  | { index: number; kind: "task"; text: string; prompt: string; allowed: string[] | undefined }
  | { index: number; kind: "nudge"; text: string; allowed: string[] | undefined }
  | { index: number; kind: "restatement"; text: string; allowed: string[] | undefined }
  | { index: number; kind: "assistant"; text: string; calls: ToolCall[] }
  | {
      index: number;
      kind: "tool-result";
      text: string;
      toolCallId: string;
      /** The called tool's name, from the answer that called it. */
      tool: string | undefined;
      /** Receipt class when the tool is a pick (not a Working tool). */
      receipt: ReceiptClass | undefined;
      allowed: string[] | undefined;
      endsTurn: boolean;
    }
  | { index: number; kind: "other"; role: string; text: string };

/** One tool call of a model answer. */
export interface ToolCall {
  id: string;
  name: string;
}

/**
 * Reads every message of a request body. Tool results are matched to their call by id so a
 * pick's receipt can be classified.
 * @see SPEC §7.3 (Turn part), §7.4 (receipts), §7.5 (restatement), §5.7 (nudge)
 */
export function readConversation(body: RequestBody): ReadMessage[] {
  const callName = new Map<string, string>();
  return body.parsed.map((m, index) => readMessage(m, index, callName));
}

function readMessage(m: ChatMessage, index: number, callName: Map<string, string>): ReadMessage {
  const text = contentText(m);
  switch (m.role) {
    case "system":
    case "developer":
      return { index, kind: "system", text };
    case "user": {
      const allowed = lastAllowedList(text);
      if (text.startsWith(RESTATEMENT_OPENING)) return { index, kind: "restatement", text, allowed };
      if (text.startsWith(NUDGE_TEXT)) return { index, kind: "nudge", text, allowed };
      const cut = text.lastIndexOf("<jr2-turn>");
      const prompt = (cut === -1 ? text : text.slice(0, cut)).trimEnd();
      return { index, kind: "task", text, prompt, allowed };
    }
    case "assistant": {
      const calls = (m.tool_calls ?? []).map((c) => ({ id: c.id ?? "", name: c.function?.name ?? "" }));
      for (const c of calls) callName.set(c.id, c.name);
      return { index, kind: "assistant", text, calls };
    }
    case "tool": {
      const toolCallId = m.tool_call_id ?? "";
      const tool = callName.get(toolCallId);
      const isPick = tool !== undefined && !WORKING_TOOL_NAMES.has(tool);
      return {
        index,
        kind: "tool-result",
        text,
        toolCallId,
        tool,
        receipt: isPick ? classifyReceipt(tool, text) : undefined,
        allowed: isPick ? lastAllowedList(text) : undefined,
        endsTurn: isPick && /your turn (is|was already) over/i.test(text),
      };
    }
    default:
      return { index, kind: "other", role: m.role, text };
  }
}

/** The Allowed-picks list a message told the model, if it told one. */
export function allowedStatedBy(m: ReadMessage): string[] | undefined {
  return "allowed" in m ? m.allowed : undefined;
}

/** A short label for a message in a reason: `message 5 (tool result of "finish")`. */
export function describe(m: ReadMessage): string {
  switch (m.kind) {
    case "tool-result":
      return `message ${m.index} (tool result of "${m.tool ?? "?"}")`;
    case "assistant":
      return `message ${m.index} (model answer${m.calls.length ? ` calling ${m.calls.map((c) => c.name).join(", ")}` : " without tool calls"})`;
    case "other":
      return `message ${m.index} (role ${m.role})`;
    default:
      return `message ${m.index} (${m.kind})`;
  }
}
