/**
 * `POST /runs/:runId/fork` (ADR-0270): a new run restored from a saved version of another, in
 * phases — read the version (refusing one saved by another Machine than the one served now) →
 * rewrite it under a new runId (`fork-snapshot.ts`: new iids and turnIds, empty ledger and
 * epochs, timers' remaining delay) and apply the context patch → commit its run row, its first
 * version and its `forked-from` entry in one save → record `forked-to` on the source's log →
 * restore it like a run at start-up (its live Turns admitted afresh, each on a new conversation
 * with its task). Killed before the commit: no fork; after it: the next start restores it.
 * Each Repo Slot gets a repository and Worktree of its own at the version's commit (issue 28 §3,
 * repo-versions.ts); a plain workspace, when the workflow has one, starts with an empty
 * directory under the fork's runId (never copied) — the answer names them (`plainWorkspaces`).
 * @see SPEC §8; issue 13 item 2
 */
import { randomBytes, randomUUID } from "node:crypto";
import {
  type ControlClient,
  credentialInJson,
  type ForkAnswer,
  Jr2Error,
  type RunFeedEvent,
  URL_CREDENTIAL_FIX,
} from "@jr2/wire";
import { crashPoint } from "../durability/crash-points.js";
import { restoreRun } from "../durability/restore.js";
import type { StoredRunVersion } from "../durability/store/run-store.js";
import { plainWorkspaceNames, workspacesOf } from "../menu/workspaces-of.js";
import { applyContextPatch } from "./context-patch.js";
import { forkSourceOf } from "./fork-faulted.js";
import { forkBlob, replaceStrings } from "./fork-snapshot.js";
import { storedVersion } from "./history-views.js";
import { restoreDeps } from "./host-restore.js";
import type { HostState } from "./host-state.js";
import { LiveRun } from "./live-run.js";
import { checkoutForFork } from "./repo-versions.js";
import { evictWhenSaved } from "./run-table.js";

/** What a fork asks for: the version, an optional context merge patch, and who asked. */
export interface ForkAsk {
  at: number;
  context?: Record<string, unknown>;
  by: ControlClient;
}

/**
 * Forks `runId` at version `ask.at`; resolves once the fork is committed and restored.
 * A version its Machine faulted in forks from the newest version before the faulting macrostep,
 * or from the source's stored input (fork-faulted.ts, ADR-0272).
 * @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_VERSION_NOT_FOUND, JR2_ERR_FORK_DRIFTED (the
 *   version's Machine is not the one served now), JR2_ERR_FORK_CONTEXT_INVALID,
 *   JR2_ERR_SERVICE_STOPPING, what the store throws
 */
export async function forkRun(state: HostState, runId: string, ask: ForkAsk): Promise<ForkAnswer> {
  const asked = await storedVersion(state, runId, ask.at);
  refuseDrift(state, runId, asked);
  // A version its Machine faulted in is never restored as it is (ADR-0272).
  const { version, fresh } = await forkSourceOf(state, runId, asked, ask.context !== undefined);
  if (state.stopping) throw new Jr2Error("JR2_ERR_SERVICE_STOPPING");
  const newRunId = state.mintRunId();
  const now = state.now();
  const { blob, turns } = forkBlob(
    { blob: version.blob, savedAtMs: Date.parse(version.at), newRunId, nowMs: now.getTime() },
    { hex: () => randomBytes(4).toString("hex"), turnId: randomUUID },
  );
  // Its Repo Slots: a repository and Worktree of its own at the version's commits (issue 28 §3),
  // checked out before the fork is committed; the snapshot's handles renamed to them.
  const repos = await checkoutForFork(state, version.blob, newRunId);
  if (repos.renames.size > 0) {
    blob.snapshot = replaceStrings(blob.snapshot, repos.renames);
    blob.repoSlots = repos.repoSlots;
    blob.repoCommits = repos.repoCommits;
  }
  // None when the fork starts again from the input (fork-faulted.ts): a value and context come with its start.
  const snapshot = (blob.snapshot ?? {}) as { value?: unknown; context?: unknown };
  if (ask.context !== undefined) snapshot.context = patched(runId, ask, snapshot.context);
  const from = { runId, version: version.version };
  const forkedFrom: RunFeedEvent = {
    type: "forked-from",
    ...from,
    by: ask.by,
    value: snapshot.value ?? null,
    context: snapshot.context ?? null,
    seq: 0,
    at: now.toISOString(),
  };
  await state.store.save(blob, [], [], [forkedFrom], { kind: "fork", from, by: ask.by });
  crashPoint("fork-committed");
  state.log.info({ runId: newRunId, forkedFrom: from, turns }, "run forked");
  await recordForkedTo(state, runId, {
    type: "forked-to",
    runId: newRunId,
    version: version.version,
    by: ask.by,
  });
  await startFork(state, newRunId, fresh);
  return {
    runId: newRunId,
    forkedFrom: from,
    workspaceEmpty: true,
    ...(repos.renames.size > 0 ? { repos: repos.repoCommits } : {}),
    plainWorkspaces: plainWorkspacesOf(state, version.blob.workflow),
  };
}

/** The plain workspaces (no Repo Slot) `workflow` declares, by name (ADR-0228). */
function plainWorkspacesOf(state: HostState, workflow: string): string[] {
  const machine = state.workflows.get(workflow);
  return machine ? plainWorkspaceNames(workspacesOf(machine)) : [];
}

/** A version saved by another Machine than the one served now is refused (the resume rule is issue 13 item 4's). */
function refuseDrift(state: HostState, runId: string, version: StoredRunVersion): void {
  const { blob } = version;
  const info = state.infos.get(blob.workflow);
  const reason = !info
    ? `workflow \`${blob.workflow}\` is no longer served`
    : info.fingerprint !== blob.machineFingerprint
      ? `the Machine of \`${blob.workflow}\` changed shape since that version (fingerprint ${blob.machineFingerprint.slice(0, 12)} → ${info.fingerprint.slice(0, 12)})`
      : undefined;
  if (reason !== undefined)
    throw new Jr2Error("JR2_ERR_FORK_DRIFTED", { runId, version: version.version, reason });
}

/** The version's context with the patch applied. @throws JR2_ERR_FORK_CONTEXT_INVALID */
function patched(runId: string, ask: ForkAsk, context: unknown): unknown {
  const found = credentialInJson(ask.context);
  if (found)
    throw new Jr2Error("JR2_ERR_FORK_CONTEXT_INVALID", {
      runId,
      version: ask.at,
      detail: `${found.path.join(".")} is a URL holding a credential (${found.what}); jr2 keeps and shows a run's context, so remove it and ${URL_CREDENTIAL_FIX}`,
    });
  try {
    return applyContextPatch(context, ask.context ?? {});
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Jr2Error("JR2_ERR_FORK_CONTEXT_INVALID", { runId, version: ask.at, detail });
  }
}

/** `forked-to` on the source's log: through its feed while it is live, else appended after its last event. */
async function recordForkedTo(
  state: HostState,
  runId: string,
  entry: Extract<RunFeedEvent, { type: "forked-to" }> extends infer E ? Omit<E, "seq" | "at"> : never,
): Promise<void> {
  const live = state.runs.get(runId);
  if (live) {
    live.feed.append(entry);
    return;
  }
  const last = await state.store.lastEventSeq(runId);
  const event = { ...entry, seq: last === undefined ? 0 : last + 1, at: state.now().toISOString() };
  await state.store.appendEvents(runId, [event as RunFeedEvent]);
  // A recently settled run's feed is served from memory (ADR-0260): it gets the entry too.
  const kept = state.settledFeeds.get(runId);
  if (kept) state.settledFeeds.remember(runId, [...kept, event as RunFeedEvent]);
}

/** Restores the committed fork into memory like a run at start-up (a failure keeps it faulted, saved). */
async function startFork(state: HostState, runId: string, fresh: boolean): Promise<void> {
  const blob = await state.store.load(runId);
  if (!blob) return;
  const deps = restoreDeps(state);
  // From the source's stored input: its Machine faulted in the initial macrostep (ADR-0272).
  if (fresh) {
    const { log, hooks } = state;
    deps.revive = (init) => new LiveRun({ ...init, snapshot: undefined, log, hooks });
  }
  const outcome = await restoreRun(blob, deps);
  if (outcome.kind !== "live") return;
  state.runs.set(runId, outcome.run);
  evictWhenSaved(state, outcome.run);
}
