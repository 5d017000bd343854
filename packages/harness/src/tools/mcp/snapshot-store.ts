import type { McpSnapshot } from "./canonical.js";

/**
 * Where a conversation's MCP snapshot is kept (issue 29 item 3): the Harness's durable state
 * (`conversations/store/`'s `harness_records`, kind `mcp-snapshot`, wired in wire/durable-ports.ts)
 * or memory. `tools/` sits below `conversations/` (ADR-0160), so this folder defines the port and
 * the store implements it. A rebuild after a restart reads the stored snapshot and reuses it.
 * Secrets never reach it: a snapshot holds tool names, descriptions and schemas only.
 */
export interface McpSnapshotStore {
  get(iid: string): Promise<McpSnapshot | undefined>;
  put(iid: string, snapshot: McpSnapshot): Promise<void>;
  delete(iid: string): Promise<void>;
}

/** The in-memory store: the default, and the tests'. */
export function memorySnapshotStore(): McpSnapshotStore {
  const map = new Map<string, McpSnapshot>();
  return {
    get: async (iid) => map.get(iid),
    put: async (iid, snapshot) => {
      map.set(iid, structuredClone(snapshot));
    },
    delete: async (iid) => {
      map.delete(iid);
    },
  };
}
