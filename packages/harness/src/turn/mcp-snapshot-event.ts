import type { StreamEvent } from "@jr2/wire";
import type { McpSession } from "../tools/mcp/mcp-session.js";
import type { TurnDeps } from "./turn-deps.js";

/**
 * The transcript event that carries a conversation's MCP snapshot to the Orchestrator (issue 29
 * item 3): its hash, each tool's model-facing name with its server and the server's own name,
 * whether it was reused from the store, and the servers that were down (reasons redacted).
 */
export function mcpSnapshotEvent(submissionId: string, session: McpSession, deps: TurnDeps): StreamEvent {
  return {
    type: "transcript",
    submissionId,
    entry: {
      kind: "mcp-snapshot",
      hash: session.snapshot.hash,
      tools: session.snapshot.tools.map((t) => ({ name: t.name, server: t.server, tool: t.tool })),
      reused: session.reused,
      down: session.down.map((d) => ({ server: d.server, reason: deps.secrets.redact(d.reason) })),
    },
  };
}
