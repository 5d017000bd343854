import type { Tool } from "@jr2/wire";
import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import type { Tool as PiTool } from "@mariozechner/pi-ai";
import type { Presenter } from "../presenter.js";
import { jr2Result, presentedTools } from "./menu-tools.js";

/** A user message as pi-agent-core takes it (prompt, steer). */
export interface PiUserMessage {
  role: "user";
  content: Array<{ type: "text"; text: string }>;
  timestamp: number;
}

/**
 * The pi presenter (ADR-0160): the Menu as pi-ai tools after the seat's Working tools
 * (menu-tools.ts `presentedTools`), a receipt as a jr2 tool result, a text as a pi user
 * message. The seat builds its tools block and its user messages through it.
 */
export function piPresenter(
  working: readonly AgentTool[] = [],
): Presenter<PiTool, AgentToolResult<unknown>, PiUserMessage> {
  const workingNames = new Set(working.map((t) => t.name));
  return {
    tools: (menu: readonly Tool[]) => presentedTools(working, menu),
    placeReceipt: (text) => jr2Result({ text }),
    placeText: (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() }),
    readReceipt: (r) => r.content.map((c) => (c.type === "text" ? c.text : "")).join(""),
    readText: (m) => m.content.map((c) => c.text).join(""),
    menuNames: (tools) => tools.filter((t) => !workingNames.has(t.name)).map((t) => t.name),
  };
}
