/**
 * The lower folders' persistence ports, kept in the Harness's durable store (issue 27,
 * ADR-0175). `conversations/store/` sits above `provider/`, `tools/` and `workspace/`
 * (ADR-0160), so each of those folders defines its own small port and this file — in `wire/`,
 * which may import every folder — backs each one with the store's generic `harness_records`
 * table, one record kind per port:
 *   `kv-working-set`  key = model endpoint   issue 30's KV working set (ADR-0430)
 *   `mcp-snapshot`    key = conversation iid issue 29's frozen MCP tools (ADR-0230)
 *   `repo-slot`       key = slot key         issue 28's Repo Slot registry (ADR-0210)
 * Writes are queued and committed with the store's next flush (at the latest on the next turn
 * of the event loop), as the conversations' own steps are.
 */
import type { HarnessStore } from "../conversations/store/harness-store.js";
import type { KeptMember, WorkingSetStore } from "../provider/scheduling/working-set-store.js";
import type { McpSnapshot } from "../tools/mcp/canonical.js";
import type { McpSnapshotStore } from "../tools/mcp/snapshot-store.js";
import type { SlotRecord, WorkspaceRegistryStore } from "../workspace/workspace-registry.js";

/** The record kinds of `harness_records` this file owns. */
export const RECORD_KINDS = {
  workingSet: "kv-working-set",
  mcpSnapshot: "mcp-snapshot",
  repoSlot: "repo-slot",
} as const;

type Records = Pick<HarnessStore, "getRecord" | "putRecord" | "deleteRecord" | "listRecords">;

/** Issue 30's KV working sets, per endpoint, across a restart. */
export function durableWorkingSets(store: Records): WorkingSetStore {
  return {
    load: (endpoint) =>
      (store.getRecord(RECORD_KINDS.workingSet, endpoint) as KeptMember[] | undefined) ?? [],
    save: (endpoint, members) => store.putRecord(RECORD_KINDS.workingSet, endpoint, members),
  };
}

/** Issue 29's MCP snapshots, per conversation: a rebuilt conversation reuses its own. */
export function durableMcpSnapshots(store: Records): McpSnapshotStore {
  return {
    get: async (iid) => store.getRecord(RECORD_KINDS.mcpSnapshot, iid) as McpSnapshot | undefined,
    put: async (iid, snapshot) => store.putRecord(RECORD_KINDS.mcpSnapshot, iid, snapshot),
    delete: async (iid) => store.deleteRecord(RECORD_KINDS.mcpSnapshot, iid),
  };
}

/** Issue 28's Repo Slot registry: a restarted Harness still knows its runs' slots. */
export function durableWorkspaceRegistry(store: Records): WorkspaceRegistryStore {
  return {
    get: async (key) => store.getRecord(RECORD_KINDS.repoSlot, key) as SlotRecord | undefined,
    put: async (key, record) => store.putRecord(RECORD_KINDS.repoSlot, key, record),
    delete: async (key) => store.deleteRecord(RECORD_KINDS.repoSlot, key),
    list: async () => store.listRecords(RECORD_KINDS.repoSlot).map((r) => r.value as SlotRecord),
  };
}
