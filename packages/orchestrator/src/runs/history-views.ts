/**
 * `GET /runs/:runId/history` and `GET /runs/:runId/history/:version` (ADR-0270): a run's kept
 * versions, read from the store, and one version whole as the wire shows it — its snapshot
 * as stored, root context and state value, timers, the ledger in summary (never a stream URL).
 * @see SPEC §8; issue 13 item 1
 */
import { Jr2Error, type RunHistory, type RunVersion } from "@jr2/wire";
import type { StoredRunVersion } from "../durability/store/run-store.js";
import { workspacesOf } from "../menu/workspaces-of.js";
import type { HostState } from "./host-state.js";
import { storedBlob } from "./run-table.js";

/** The run's kept versions, oldest first. @throws JR2_ERR_RUN_NOT_FOUND */
export async function runHistory(state: HostState, runId: string): Promise<RunHistory> {
  const blob = await storedBlob(state, runId);
  const machine = state.workflows.get(blob.workflow);
  return {
    runId,
    versions: await state.store.versions(runId),
    ...(machine ? { workspaces: workspacesOf(machine) } : {}),
  };
}

/**
 * The version `version` of `runId`, from the store.
 * @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_VERSION_NOT_FOUND (naming the kept range)
 */
export async function storedVersion(
  state: HostState,
  runId: string,
  version: number,
): Promise<StoredRunVersion> {
  await storedBlob(state, runId);
  const found = await state.store.version(runId, version);
  if (found) return found;
  const kept = (await state.store.versions(runId)).map((v) => v.version);
  throw new Jr2Error("JR2_ERR_RUN_VERSION_NOT_FOUND", { runId, version, kept: keptRange(kept) });
}

/** One version whole, as `GET /runs/:runId/history/:version` answers. */
export async function runVersion(state: HostState, runId: string, version: number): Promise<RunVersion> {
  return versionView(await storedVersion(state, runId, version));
}

/** The wire view of a stored version. */
export function versionView(v: StoredRunVersion): RunVersion {
  const { blob } = v;
  const snapshot = blob.snapshot as { context?: unknown } | null;
  return {
    version: v.version,
    at: v.at,
    value: v.value,
    status: v.status,
    cause: v.cause,
    ...(v.workspace === undefined ? {} : { workspace: v.workspace }),
    runId: blob.runId,
    workflow: blob.workflow,
    machineFingerprint: blob.machineFingerprint,
    snapshot: blob.snapshot,
    context: snapshot?.context ?? null,
    timers: blob.timers.map((t) => ({ id: t.id, event: t.event, delay: t.delay, dueAt: t.dueAt })),
    ledger: Object.entries(blob.ledger).map(([iid, e]) => ({
      iid,
      turnId: e.turnId,
      ...(e.child === undefined ? {} : { child: e.child }),
    })),
    epochs: blob.epochs,
    usage: blob.usage,
  };
}

/** Kept version numbers in words: `none`, `1–12`, or a list when there are gaps. */
function keptRange(kept: readonly number[]): string {
  if (kept.length === 0) return "none";
  const first = kept[0]!;
  const last = kept.at(-1)!;
  return last - first + 1 === kept.length ? `${first}–${last}` : kept.join(", ");
}
