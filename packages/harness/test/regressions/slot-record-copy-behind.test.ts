/**
 * Regression (issue 28's scale rule, `pnpm bench:workspace-soak`, 798 runs under SIGKILLs): one
 * swept run's record copy on the node (`.repos/<runId>/<ws>/<slot>.json`) still claimed its
 * Worktree after the clean-up, with a `.tmp` beside it. Root cause: a record is written to the
 * store, then copied to disk (ADR-0217); the Harness was killed between the two writes of the
 * removal's `removedAt`, and nothing ever wrote that copy again — the store knew the Worktree
 * gone, so no pass looked at the run again. Fixed: listing the records (each clean-up pass)
 * writes again a copy that differs from the store's.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createMemoryWorkspaceRegistry, type SlotRecord } from "../../src/workspace/workspace-registry.js";
import { createWorkspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture } from "../workspace/git-fixture.js";

let fx: GitFixture | undefined;
afterEach(() => fx?.cleanup());

describe("a slot record's copy on disk left behind the store by a kill", () => {
  it("is written again from the store when the records are listed", async () => {
    fx = makeGitFixture();
    const config = readWorkspaceConfig({ JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot });
    const store = createMemoryWorkspaceRegistry();
    const ws = createWorkspaces(config, { registry: store });
    const ref = { runId: "run-1", workflow: "review", workspace: "main", slot: "app" };
    await ws.attach({ ...ref, url: fx.app });
    const copy = `${fx.workRoot}/.repos/run-1/main/app.json`;
    const before = readFileSync(copy, "utf8");
    await ws.remove(ref);
    // The kill: the store has `removedAt`, the disk copy is the one from before the removal.
    writeFileSync(copy, before);
    expect((JSON.parse(readFileSync(copy, "utf8")) as SlotRecord).removedAt).toBeUndefined();
    await ws.records();
    expect((JSON.parse(readFileSync(copy, "utf8")) as SlotRecord).removedAt).toEqual(expect.any(Number));
  });
});
