import type { Workspaces } from "./workspaces.js";

/** What the Orchestrator's store knows of a run (`GET /runs/:runId/settled`); undefined: no answer. */
export type RunStateSource = (
  runId: string,
) => Promise<{ state: "running" | "settled" | "deleted"; settledAt?: string } | undefined>;

/**
 * One clean-up pass (issue 28 §6): removes the Worktrees of runs the Orchestrator's store says
 * are deleted, or settled at least `keepMs` (`JR2_WORKTREE_KEEP`) ago — after rescuing their
 * uncommitted work (workspaces.remove). Only on that positive knowledge: a run still running,
 * an Orchestrator that does not answer, an answer without a time — nothing is removed. The run's
 * repository stays (fork and retry recreate a Worktree from it). Never throws.
 * @returns the Worktrees removed, and the runs skipped for want of an answer
 */
export async function sweepWorktrees(opts: {
  workspaces: Workspaces;
  runState: RunStateSource;
  keepMs: number;
  now?: () => number;
}): Promise<{ removed: string[]; unanswered: string[] }> {
  const now = opts.now ?? Date.now;
  // The slots of each run with a Worktree, from one listing: a removal names its slot, so a pass
  // lists the records once, not once per run (the SIGKILL soak's clean-up fell behind at ~2 s a
  // removal with 400 runs on the node, ADR-0222).
  const slotsOf = new Map<string, Array<{ workspace: string; slot: string }>>();
  for (const r of await opts.workspaces.records())
    if (r.removedAt === undefined)
      slotsOf.set(r.runId, [...(slotsOf.get(r.runId) ?? []), { workspace: r.workspace, slot: r.slot }]);
  const removed: string[] = [];
  const unanswered: string[] = [];
  for (const [runId, slots] of slotsOf) {
    const known = await opts.runState(runId).catch(() => undefined);
    if (!known) {
      unanswered.push(runId);
      continue;
    }
    const settledFor = known.settledAt ? now() - Date.parse(known.settledAt) : Number.NaN;
    const due = known.state === "deleted" || (known.state === "settled" && settledFor >= opts.keepMs);
    if (!due) continue;
    for (const { workspace, slot } of slots) {
      const done = await opts.workspaces
        .remove({ runId, workspace, slot })
        .catch(() => ({ removed: [] as string[] }));
      removed.push(...done.removed);
    }
  }
  return { removed, unanswered };
}

/**
 * Runs {@link sweepWorktrees} every `everyMs` (default an hour, `JR2_WORKTREE_SWEEP_S`), and
 * once shortly after start (30 s, or `everyMs` when shorter);
 * returns the stop function. Timers are unref'd: they never hold the process up.
 */
export function startWorktreeSweeper(opts: {
  workspaces: Workspaces;
  runState: RunStateSource;
  keepMs: number;
  everyMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}): () => void {
  let stopped = false;
  const pass = async () => {
    if (stopped) return;
    const { removed, unanswered } = await sweepWorktrees(opts);
    if (removed.length || unanswered.length)
      opts.log?.("Worktree clean-up", { removed, unansweredRuns: unanswered.length });
  };
  const everyMs = opts.everyMs ?? 3_600_000;
  // One pass at a time: a slow pass (many runs, a slow Orchestrator) is never overlapped by the next.
  let busy = false;
  const once = () => {
    if (busy) return;
    busy = true;
    void pass().finally(() => {
      busy = false;
    });
  };
  const first = setTimeout(once, Math.min(30_000, everyMs));
  const every = setInterval(once, everyMs);
  first.unref();
  every.unref();
  return () => {
    stopped = true;
    clearTimeout(first);
    clearInterval(every);
  };
}
