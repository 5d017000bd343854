import { Jr2Error } from "@jr2/wire";
import type { RepoSlotRecord, RunBlob } from "../durability/store/run-blob.js";
import type { HostState } from "./host-state.js";

/**
 * Fork and retry restore the files too (issue 28 §3): a version's files are the newest commit
 * recorded per slot at or before it (`repoCommits` in its blob; none yet: the slot's base).
 * The Harness checks it out; the Orchestrator never touches the work root.
 */

/** The commit each slot of `blob` holds in that version. */
export function versionCommits(blob: RunBlob): Array<{ key: string; slot: RepoSlotRecord; commit: string }> {
  return Object.entries(blob.repoSlots ?? {}).map(([key, slot]) => ({
    key,
    slot,
    commit: blob.repoCommits?.[key] ?? slot.base,
  }));
}

/**
 * A retry: resets each slot's branch and Worktree of the run to the version's commit (the
 * Harness rescues what was there first), recreating a removed Worktree.
 * @throws Jr2Error the Harness's code (`JR2_ERR_WORKSPACE_COMMIT_GONE`, …) or
 *   `JR2_ERR_WORKSPACE_HARNESS_TOO_OLD`
 */
export async function checkoutForRetry(state: HostState, version: RunBlob): Promise<void> {
  for (const { slot, commit } of versionCommits(version)) {
    const { client, harnessUrl } = harnessOf(state, version.runId, slot.workspace);
    await client.checkoutAt(harnessUrl, {
      runId: version.runId,
      workflow: version.workflow,
      workspace: slot.workspace,
      slot: slot.slot,
      commit,
    });
  }
}

/**
 * A fork: each slot of the source version gets a new repository and Worktree for `newRunId` on
 * `jr2/<workflow>/<newRunId>` at the version's commit. Returns the renames the fork's snapshot
 * needs (the source's Worktree paths and branches → the fork's) and the fork's slot records.
 * @throws Jr2Error as {@link checkoutForRetry}
 */
export async function checkoutForFork(
  state: HostState,
  version: RunBlob,
  newRunId: string,
): Promise<{
  renames: Map<string, string>;
  repoSlots: Record<string, RepoSlotRecord>;
  repoCommits: Record<string, string>;
}> {
  const renames = new Map<string, string>();
  const repoSlots: Record<string, RepoSlotRecord> = {};
  const repoCommits: Record<string, string> = {};
  for (const { key, slot, commit } of versionCommits(version)) {
    const { client, harnessUrl } = harnessOf(state, newRunId, slot.workspace);
    const h = await client.checkoutAt(harnessUrl, {
      runId: newRunId,
      workflow: version.workflow,
      workspace: slot.workspace,
      slot: slot.slot,
      commit,
      from: { runId: version.runId, workspace: slot.workspace, slot: slot.slot },
    });
    renames.set(slot.path, h.path);
    renames.set(slot.branch, h.branch);
    repoSlots[key] = { ...slot, path: h.path, branch: h.branch };
    repoCommits[key] = commit;
  }
  return { renames, repoSlots, repoCommits };
}

function harnessOf(state: HostState, runId: string, workspace: string) {
  const placement = state.placement;
  if (!placement?.provider || !placement.repoSlots)
    throw new Jr2Error("JR2_ERR_WORKSPACE_GIT_FAILED", {
      command: "checkout-at",
      exit: "not run",
      stderr: "this Orchestrator has no Harness to restore the run's Repo Slots on (set JR2_HARNESS_URL)",
    });
  return {
    client: placement.repoSlots,
    harnessUrl: placement.provider.provide({ runId, name: workspace }).harnessUrl,
  };
}
