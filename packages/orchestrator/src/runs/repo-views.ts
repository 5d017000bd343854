import type { RunRepos, RunSettledAnswer } from "@jr2/wire";
import type { RunBlob } from "../durability/store/run-blob.js";
import type { HostState } from "./host-state.js";
import { storedBlob } from "./run-table.js";

/**
 * `GET /runs/:runId/repos` (issue 28 §5, for `jr2 show`): the run's Repo Slots from its live
 * state or its stored blob — branch, base, the newest recorded commit, what was pushed — and,
 * asked of its Harness, the commits on the branch and a diffstat. A Harness that cannot answer
 * (down, too old, the Worktree's repository gone) leaves `unavailable` saying why; the rest stands.
 * @throws JR2_ERR_RUN_NOT_FOUND
 */
export async function runRepos(state: HostState, runId: string): Promise<RunRepos> {
  const live = state.runs.get(runId);
  const slots = live
    ? Object.fromEntries(live.repoSlots)
    : ((await storedBlob(state, runId)) as RunBlob).repoSlots;
  const commits = live ? Object.fromEntries(live.repoCommits) : (await storedBlob(state, runId)).repoCommits;
  const repos: RunRepos["repos"] = [];
  for (const [key, slot] of Object.entries(slots ?? {})) {
    const head = commits?.[key];
    const entry: RunRepos["repos"][number] = {
      workspace: slot.workspace,
      slot: slot.slot,
      path: slot.path,
      branch: slot.branch,
      base: slot.base,
      ...(head ? { head } : {}),
      ...(slot.pushed ? { pushed: slot.pushed } : {}),
    };
    const placement = state.placement;
    if (placement?.provider && placement.repoSlots) {
      try {
        const { harnessUrl } = placement.provider.provide({ runId, name: slot.workspace });
        const d = await placement.repoSlots.diff(harnessUrl, {
          runId,
          workspace: slot.workspace,
          slot: slot.slot,
          maxBytes: 1024,
        });
        Object.assign(entry, {
          summary: d.summary,
          files: d.files,
          ...(d.commits ? { commits: d.commits } : {}),
        });
      } catch (error) {
        entry.unavailable = error instanceof Error ? error.message : String(error);
      }
    } else
      entry.unavailable = "this Orchestrator has no Harness (JR2_HARNESS_URL) to read the repository from";
    repos.push(entry);
  }
  return { runId, repos };
}

/**
 * Whether a run is settled, as the store knows it (issue 28 §6): the Harness's Worktree clean-up
 * acts only on this positive knowledge. Live or drifted → `running`; a stored settled run →
 * `settled` at its last update; no run in the store → `deleted`.
 */
export async function runSettled(state: HostState, runId: string): Promise<RunSettledAnswer> {
  const live = state.runs.get(runId);
  if (live?.status === "running") return { runId, state: "running" };
  const blob = state.damaged.get(runId) ?? (await state.store.load(runId));
  if (!blob) return { runId, state: "deleted" };
  if (blob.status === "running" || blob.status === "drifted") return { runId, state: "running" };
  return { runId, state: "settled", settledAt: blob.updatedAt };
}
