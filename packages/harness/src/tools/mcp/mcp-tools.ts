import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import type { Redactor } from "../secret-redaction.js";
import type { McpSession } from "./mcp-session.js";

/** Longest MCP tool result the model reads, bytes of UTF-8 (a cut is said). */
export const MCP_RESULT_MAX_BYTES = 32 * 1024;

/**
 * The model-facing texts of MCP calls: written by presenters/menu.ts (every receipt is), handed
 * in by the Turn — `tools/` sits below `presenters/` (ADR-0160).
 */
export interface McpTexts {
  gone(name: string): string;
  down(name: string, server: string, reason: string): string;
  failed(name: string, message: string): string;
  cut(keptBytes: number, totalBytes: number): string;
}

/** Tells the Harness's log about an MCP failure: one warn line naming the server. */
export type McpWarn = (msg: string, fields: Record<string, unknown>) => void;

/**
 * The snapshot's tools as pi `AgentTool`s, in snapshot order (sorted by name), placed after the
 * Working tools and before the Menu (issue 29: tools block = Working + MCP snapshot + Menu). Each
 * call goes to its server through the session; the model reads the result redacted (ADR-0158)
 * and bounded ({@link MCP_RESULT_MAX_BYTES}), or a receipt from menu.ts: the tool vanished, the
 * server is down, the call failed. No failure throws: an MCP failure never faults the Turn.
 */
export function mcpAgentTools(
  session: McpSession,
  secrets: Redactor,
  warn: McpWarn,
  texts: McpTexts,
): AgentTool[] {
  return session.snapshot.tools.map((tool) => ({
    name: tool.name,
    label: tool.name,
    description: tool.description,
    parameters: tool.inputSchema as never,
    execute: async (_toolCallId, params, signal): Promise<AgentToolResult<unknown>> => {
      const outcome = await session.call(tool, params, signal);
      let text: string;
      switch (outcome.kind) {
        case "result":
          text = bounded(secrets.redact(outcome.text), texts.cut);
          if (outcome.isError) {
            warn("MCP tool answered an error", { server: tool.server, tool: tool.tool });
            text = texts.failed(tool.name, text);
          }
          break;
        case "gone":
          warn("MCP tool no longer offered by its server", { server: tool.server, tool: tool.tool });
          text = texts.gone(tool.name);
          break;
        case "down":
          warn("MCP server unavailable", { server: tool.server, reason: secrets.redact(outcome.reason) });
          text = texts.down(tool.name, tool.server, secrets.redact(outcome.reason));
          break;
        case "failed":
          warn("MCP tool call failed", { server: tool.server, tool: tool.tool });
          text = texts.failed(tool.name, secrets.redact(outcome.message));
          break;
      }
      return { content: [{ type: "text", text }], details: { mcp: tool.server } };
    },
  }));
}

/** `text` cut to {@link MCP_RESULT_MAX_BYTES} bytes at a character boundary, the cut said. */
export function bounded(text: string, cut: McpTexts["cut"]): string {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= MCP_RESULT_MAX_BYTES) return text;
  let kept = Buffer.from(text, "utf8").subarray(0, MCP_RESULT_MAX_BYTES).toString("utf8");
  if (kept.endsWith("\uFFFD")) kept = kept.slice(0, -1);
  return kept + cut(Buffer.byteLength(kept, "utf8"), bytes);
}
