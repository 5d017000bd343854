/**
 * The lower folders' persistence ports backed by the Harness's durable store (issue 27 with
 * issues 28, 29, 30): what the KV scheduling, the MCP snapshots and the Repo Slot registry put
 * is there after the store is closed and opened again — a Harness restart — and each kind
 * stays apart from the others.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openHarnessStore } from "../../src/conversations/store/sqlite-harness-store.js";
import type { McpSnapshot } from "../../src/tools/mcp/canonical.js";
import {
  durableMcpSnapshots,
  durableWorkingSets,
  durableWorkspaceRegistry,
} from "../../src/wire/durable-ports.js";
import type { SlotRecord } from "../../src/workspace/workspace-registry.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), "jr2-ports-"));
  dirs.push(d);
  return d;
};

const slot: SlotRecord = {
  runId: "r1",
  workflow: "review",
  workspace: "ws",
  slot: "app",
  url: "/srv/repos/app",
  repo: "/work/.runs/r1/app.git",
  worktree: "/work/r1/ws/app",
  branch: "jr2/review/r1",
  base: "a".repeat(40),
  attachedAt: 1_700_000_000_000,
  rescues: 0,
};

describe("the durable store behind the lower folders' ports", () => {
  it("keeps a Repo Slot, an MCP snapshot and a KV working set across a restart", async () => {
    const dir = dataDir();
    const first = openHarnessStore(dir);
    const snapshot = { hash: "h1", tools: [], servers: [] } as unknown as McpSnapshot;
    await durableWorkspaceRegistry(first).put("r1/ws/app", slot);
    await durableMcpSnapshots(first).put("r1/coder", snapshot);
    durableWorkingSets(first).save("http://127.0.0.1:9/v1", [
      { conversation: "r1/coder", estimate: 4096, enteredAt: 5 },
    ]);
    first.close();

    const second = openHarnessStore(dir);
    expect(await durableWorkspaceRegistry(second).get("r1/ws/app")).toEqual(slot);
    expect(await durableWorkspaceRegistry(second).list()).toEqual([slot]);
    expect(await durableMcpSnapshots(second).get("r1/coder")).toEqual(snapshot);
    expect(durableWorkingSets(second).load("http://127.0.0.1:9/v1")).toEqual([
      { conversation: "r1/coder", estimate: 4096, enteredAt: 5 },
    ]);
    // Kinds are apart: the same key in another kind is not found.
    expect(await durableMcpSnapshots(second).get("r1/ws/app")).toBeUndefined();
    expect(durableWorkingSets(second).load("unknown")).toEqual([]);
    await durableMcpSnapshots(second).delete("r1/coder");
    second.close();

    const third = openHarnessStore(dir);
    expect(await durableMcpSnapshots(third).get("r1/coder")).toBeUndefined();
    third.close();
  });
});
