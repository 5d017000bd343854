/**
 * A run's saved history (ADR-0270, ADR-0277): every save of a RunBlob is also kept as a numbered
 * version (1, 2, … per run) with its cause, committed in the save's transaction. Every version
 * of a live run is kept; the save that settles a run folds them — `step` versions dropped, then
 * the oldest beyond `versionsKept` — and retention by age deletes them with the run's log. The
 * memory store's versions (the SQLite and PostgreSQL stores pack them, `version-codec.ts`).
 * @see SPEC §8
 */
import type { RunStatus, VersionCause } from "@jr2/wire";
import { keptCause } from "./version-codec.js";

/**
 * What versions read of a RunBlob (`run-store.ts` names the whole; kept structural so this
 * file does not import it back).
 */
export interface VersionedBlob {
  runId: string;
  status: RunStatus;
  snapshot: unknown;
  updatedAt: string;
  fault?: { reason: string };
  /** iid → its newest admission (an admission is read from a new entry, `version-cause.ts`). */
  ledger?: Record<string, { submissionId: string; child?: string }>;
  /** `<workspace>/<slot>` → the newest Repo-Slot commit recorded at or before this save (issue 28 §3). */
  repoCommits?: Record<string, string>;
}

/** How many versions a settled run keeps by default (`JR2_VERSIONS_KEPT`). */
export const DEFAULT_VERSIONS_KEPT = 20;

/** One kept version as listed: no blob. `at` is the blob's `updatedAt` (ISO-8601). */
export interface StoredVersionSummary {
  version: number;
  at: string;
  /** The run root's state value in that version (`null` when the blob has no snapshot). */
  value: unknown;
  status: RunStatus;
  cause: VersionCause;
  /** Reserved (issue 22): each Repo Slot's commit id in that version; never changed by a fold. */
  workspace?: Record<string, string>;
}

/** One kept version whole: its blob as saved. */
export interface StoredVersion<B extends VersionedBlob = VersionedBlob> extends StoredVersionSummary {
  blob: B;
}

/** Whether a run with this status has settled (its versions are pruned to the last N). */
export function isSettled(status: RunStatus): boolean {
  return status !== "running" && status !== "drifted";
}

/**
 * The version's reserved `workspace` field (issue 22, filled by issue 28 §3, ADR-0219): each
 * Repo Slot's newest recorded commit, by `<workspace>/<slot>`; undefined when none is recorded
 * (a slot without one is at its base).
 */
export function workspaceOfBlob(blob: VersionedBlob): Record<string, string> | undefined {
  const commits = blob.repoCommits;
  return commits && Object.keys(commits).length > 0 ? { ...commits } : undefined;
}

/** The state value of a blob's snapshot (`null` when there is none). */
export function valueOfBlob(blob: VersionedBlob): unknown {
  return (blob.snapshot as { value?: unknown } | null)?.value ?? null;
}

/**
 * Reads `JR2_VERSIONS_KEPT`: a positive integer, default {@link DEFAULT_VERSIONS_KEPT}.
 * @throws Error naming the variable and the bad value
 */
export function versionsKeptOf(env: Record<string, string | undefined>): number {
  const raw = env.JR2_VERSIONS_KEPT;
  if (raw === undefined || raw.trim() === "") return DEFAULT_VERSIONS_KEPT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(
      `JR2_VERSIONS_KEPT=${raw} is not a positive integer: set how many versions a settled run keeps (default ${DEFAULT_VERSIONS_KEPT})`,
    );
  return n;
}

/** The memory store's versions: per run, its versions in order (copies). */
export function createMemoryVersions<B extends VersionedBlob>(versionsKept: number) {
  const byRun = new Map<string, StoredVersion<B>[]>();
  return {
    /** Adds the next version of `blob.runId`; folds once settled (`step` dropped, then the last `versionsKept`). */
    add(blob: B, causeOf: (first: boolean) => VersionCause): number {
      const list = byRun.get(blob.runId) ?? [];
      byRun.set(blob.runId, list);
      const version = (list.at(-1)?.version ?? 0) + 1;
      const copy = structuredClone(blob);
      list.push({
        version,
        at: blob.updatedAt,
        value: valueOfBlob(copy),
        status: blob.status,
        cause: causeOf(version === 1),
        ...(workspaceOfBlob(copy) ? { workspace: workspaceOfBlob(copy) } : {}),
        blob: copy,
      });
      if (isSettled(blob.status)) {
        const kept = list.filter((v, i) => i === list.length - 1 || keptCause(v.cause)).slice(-versionsKept);
        list.splice(0, list.length, ...kept);
      }
      return version;
    },
    list(runId: string): StoredVersionSummary[] {
      return (byRun.get(runId) ?? []).map(({ blob: _blob, ...summary }) => structuredClone(summary));
    },
    get(runId: string, version: number): StoredVersion<B> | undefined {
      const found = byRun.get(runId)?.find((v) => v.version === version);
      return found ? structuredClone(found) : undefined;
    },
    drop(runId: string): number {
      const n = byRun.get(runId)?.length ?? 0;
      byRun.delete(runId);
      return n;
    },
  };
}
