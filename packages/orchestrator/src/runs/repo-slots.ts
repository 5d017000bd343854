import type { PlacementOptions } from "../turns/placement.js";
import type { PublishReposRequest, RepoSlotHandle, RepoSlotsRequest } from "../xstate/run-binding.js";
import { redactRepoUrl } from "./forge-link.js";
import type { LiveRun } from "./live-run.js";
import { publishSummary } from "./publish-summary.js";

/**
 * Attaches a workspace's Repo Slots for a run (issue 28 §2): on the Harness the
 * WorkspaceProvider names for the workspace, one `POST /workspaces/attach` per slot, the run's
 * feed told each (`repo-slot` `attached`); a slot refused or failed is a `fault` on the feed
 * (reason `repo-slot-attach`, the code in its detail). The Orchestrator never touches the work root.
 * @throws Error when the host has no Harness placement; the client's coded errors otherwise
 *   (`JR2_ERR_WORKSPACE_HARNESS_TOO_OLD`, the Harness's `JR2_ERR_WORKSPACE_*`)
 */
export async function attachRunRepos(
  placement: PlacementOptions | undefined,
  run: LiveRun,
  request: RepoSlotsRequest,
): Promise<Record<string, RepoSlotHandle>> {
  if (!placement?.provider || !placement.repoSlots)
    throw new Error(
      `workspace \`${request.workspace}\` has Repo Slots, but this Orchestrator has no Harness to attach them on (set JR2_HARNESS_URL)`,
    );
  const { harnessUrl } = placement.provider.provide({ runId: run.runId, name: request.workspace });
  const out: Record<string, RepoSlotHandle> = {};
  for (const [slot, spec] of Object.entries(request.repos)) {
    const h = await placement.repoSlots
      .attach(harnessUrl, {
        runId: run.runId,
        workflow: run.workflow,
        workspace: request.workspace,
        slot,
        ...spec,
      })
      .catch((error: unknown) => {
        // The run's fault reason carries the code (a person greps for it; a tool branches on it);
        // a Harness message that names the slot already (a refused URL) is not prefixed again.
        const code = (error as { code?: unknown }).code;
        const text = (error as Error).message;
        const message = `${typeof code === "string" ? `${code}: ` : ""}${text.startsWith(`Repo Slot \`${slot}\``) ? text : `Repo Slot \`${slot}\`: ${text}`}`;
        // Said on the run's log before it is thrown: a workflow that routes the workspace's
        // error (`onError: "failed"`, as the `review` example does) would otherwise end the run with no
        // word of why (newcomer, session 7: a mistyped repository path ended "failed", silent).
        // A fault, not a warning: the workspace never started (newcomer review, session 10).
        if (run.status === "running")
          run.feed.append({
            type: "fault",
            child: `workspace:${request.workspace}`,
            reason: "repo-slot-attach",
            detail: message,
          });
        throw new Error(message);
      });
    out[slot] = { path: h.path, branch: h.branch, base: h.base };
    run.repoSlots.set(`${request.workspace}/${slot}`, {
      workspace: request.workspace,
      slot,
      ...out[slot],
      url: redactRepoUrl(spec.url),
      ...(spec.ref ? { ref: spec.ref } : {}),
    });
    if (run.status === "running")
      run.feed.append({
        type: "repo-slot",
        event: "attached",
        workspace: request.workspace,
        slot,
        branch: h.branch,
        commit: h.base,
      });
    // Submodules stay empty directories (ADR-0216): said once, so nobody wonders where the code went.
    if (h.submodules?.length && run.status === "running")
      run.feed.append({
        type: "warning",
        child: `workspace:${request.workspace}`,
        message: `Repo Slot \`${slot}\`: submodules left empty (jr2 never checks them out; \`submodules: "refuse"\` refuses such a repository): ${h.submodules.slice(0, 10).join(", ")}${h.submodules.length > 10 ? ` and ${h.submodules.length - 10} more` : ""}`,
      });
  }
  return out;
}

/**
 * Publishes a workspace's slots (issue 28 §5): the Harness pushes each slot's run branch from
 * its credential-holding repository, then runs the operator's publish hook (if configured) with
 * the run's summary; the run's feed records each pushed commit and the hook's result
 * (`repo-slot` `pushed` with `hook`), which is the run's log. A failing hook fails nothing.
 * @throws Error with the code of the Harness's refusal (e.g. `JR2_ERR_WORKSPACE_PUSH_FAILED`)
 */
export async function publishRunRepos(
  placement: PlacementOptions | undefined,
  run: LiveRun,
  request: PublishReposRequest,
): Promise<void> {
  if (!placement?.provider || !placement.repoSlots)
    throw new Error(
      `workspace \`${request.workspace}\` publishes, but this Orchestrator has no Harness (set JR2_HARNESS_URL)`,
    );
  const { harnessUrl } = placement.provider.provide({ runId: run.runId, name: request.workspace });
  const summary = publishSummary(run, request.finalValue);
  for (const slot of request.slots) {
    const pushed = await placement.repoSlots
      .push(harnessUrl, { runId: run.runId, workspace: request.workspace, slot, summary })
      .catch((error: unknown) => {
        const code = (error as { code?: unknown }).code;
        throw new Error(
          `${typeof code === "string" ? `${code}: ` : ""}publishing Repo Slot \`${slot}\`: ${(error as Error).message}`,
        );
      });
    const record = run.repoSlots.get(`${request.workspace}/${slot}`);
    if (record) {
      record.pushed = { commit: pushed.commit, url: pushed.url };
      if (pushed.hook) record.hook = pushed.hook;
    }
    if (run.status === "running")
      run.feed.append({
        type: "repo-slot",
        event: "pushed",
        workspace: request.workspace,
        slot,
        branch: pushed.branch,
        commit: pushed.commit,
        url: pushed.url,
        ...(pushed.hook ? { hook: pushed.hook } : {}),
      });
    if (pushed.hook && pushed.hook.exit !== 0 && run.status === "running")
      run.feed.append({
        type: "warning",
        child: `workspace:${request.workspace}`,
        message: `Repo Slot \`${slot}\`: the publish hook ${pushed.hook.timedOut ? "timed out" : `exited ${pushed.hook.exit ?? pushed.hook.signal}`}; the push stands: ${pushed.hook.tail.slice(-2).join(" | ") || "(no output)"}`,
      });
  }
}
