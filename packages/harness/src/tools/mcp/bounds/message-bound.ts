/**
 * How large one MCP message may be, bytes of UTF-8 (ADR-0232). A model reads at most 32 KiB of
 * a result ({@link MCP_RESULT_MAX_BYTES}); a listing's tools block is bounded apart
 * (listing-bounds.ts). 4 MiB leaves room for an honest server's largest page and keeps one
 * hostile answer from growing the Harness by more than that.
 */
export const MCP_MESSAGE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The server sent something the Harness will not hold (a message over the bound): its
 * connection is closed and the server is down for the rest of the conversation. Never retried:
 * a reconnect would ask the same question and get the same answer.
 */
export class McpServerDown extends Error {}

/** The reason a server is down after an oversized message (one warn line and the receipt say it). */
export function oversizeReason(bytes: number, limit: number = MCP_MESSAGE_MAX_BYTES): string {
  return `the server sent a message of more than ${limit} bytes (at least ${bytes}); its connection is closed for this conversation`;
}
