import { z } from "zod";

/**
 * Transcript entry `mcp-snapshot` (issue 29 item 3): a conversation's frozen MCP tools, once per
 * conversation, on the first Submission's transcript — the sha256 of their canonical form, each
 * tool's name as the model reads it with its server and the server's own name, whether the
 * snapshot was reused from the Harness's store (a rebuild after restart), and the servers that
 * were down. The schemas are in the `prefix` entry's tools block, byte for byte. Never a secret:
 * headers are not part of it. An older Orchestrator skips the event (§7.6).
 */
export const McpSnapshotEntry = z.object({
  kind: z.literal("mcp-snapshot"),
  hash: z.string(),
  tools: z.array(z.object({ name: z.string(), server: z.string(), tool: z.string() })),
  reused: z.boolean(),
  down: z.array(z.object({ server: z.string(), reason: z.string() })),
});
export type McpSnapshotEntry = z.infer<typeof McpSnapshotEntry>;
