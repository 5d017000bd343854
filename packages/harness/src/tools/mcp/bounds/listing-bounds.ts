import type { McpServers } from "@jr2/wire";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CanonicalTool, ListedTool } from "../canonical.js";

/**
 * Bounds of one server's `tools/list` (ADR-0233): a hostile or broken server may page forever
 * (an endless `nextCursor`), list thousands of tools, or fill the tools block with megabytes of
 * descriptions — every byte of which the model pays for on every request.
 */

/** Pages one listing may take. */
export const MCP_LIST_MAX_PAGES = 50;
/** Tools one server may offer. */
export const MCP_TOOLS_PER_SERVER_MAX = 256;
/** Bytes of JSON one server's listed tools may take (name, description, input schema). */
export const MCP_TOOLS_PER_SERVER_MAX_BYTES = 512 * 1024;

/** Bytes of JSON all servers' tools together may take in the tools block. */
export const MCP_BLOCK_MAX_BYTES = 1024 * 1024;

/** A listing over a bound: the server is down for the conversation, this message the reason. */
export class McpListingRefused extends Error {}

/**
 * Every page of `client`'s `tools/list` within ONE deadline of `timeoutMs` for the whole
 * listing (each page gets what remains), at most {@link MCP_LIST_MAX_PAGES} pages,
 * {@link MCP_TOOLS_PER_SERVER_MAX} tools and {@link MCP_TOOLS_PER_SERVER_MAX_BYTES} bytes.
 * @throws McpListingRefused naming the bound passed; the SDK's timeout error past the deadline
 */
export async function listAllPages(client: Client, timeoutMs: number): Promise<ListedTool[]> {
  const deadline = Date.now() + timeoutMs;
  const tools: ListedTool[] = [];
  let bytes = 0;
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const left = deadline - Date.now();
    if (left <= 0)
      throw new McpListingRefused(`tools/list did not finish within ${timeoutMs} ms (all pages)`);
    const answer = await client.listTools(cursor ? { cursor } : {}, { timeout: left });
    for (const t of answer.tools)
      bytes += Buffer.byteLength(JSON.stringify([t.name, t.description, t.inputSchema]));
    tools.push(...answer.tools);
    if (tools.length > MCP_TOOLS_PER_SERVER_MAX)
      throw new McpListingRefused(
        `the server lists more than ${MCP_TOOLS_PER_SERVER_MAX} tools; split it or offer fewer`,
      );
    if (bytes > MCP_TOOLS_PER_SERVER_MAX_BYTES)
      throw new McpListingRefused(
        `the server's tools take more than ${MCP_TOOLS_PER_SERVER_MAX_BYTES} bytes of the tools block`,
      );
    cursor = answer.nextCursor;
    if (!cursor) return tools;
    if (page >= MCP_LIST_MAX_PAGES)
      throw new McpListingRefused(`tools/list went on past ${MCP_LIST_MAX_PAGES} pages`);
  }
}

/**
 * Every listed server's tools while the block stays within {@link MCP_BLOCK_MAX_BYTES}: servers
 * in name order (the same servers win every time), a server that would pass the bound is pushed
 * onto `down` with the reason instead.
 */
export function withinBlock(
  perServer: ReadonlyMap<string, CanonicalTool[]>,
  servers: McpServers,
  down: Array<{ server: string; reason: string; required: boolean }>,
): CanonicalTool[] {
  const out: CanonicalTool[] = [];
  let bytes = 0;
  for (const server of [...perServer.keys()].sort()) {
    const tools = perServer.get(server)!;
    const size = Buffer.byteLength(JSON.stringify(tools.map((t) => [t.name, t.description, t.inputSchema])));
    if (bytes + size > MCP_BLOCK_MAX_BYTES) {
      down.push({
        server,
        reason: `its tools (${size} bytes) would take the MCP tools block past ${MCP_BLOCK_MAX_BYTES} bytes`,
        required: servers[server]?.required === true,
      });
      continue;
    }
    bytes += size;
    out.push(...tools);
  }
  return out;
}
