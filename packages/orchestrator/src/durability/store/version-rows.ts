/**
 * What both stores' `run_versions` reads share (ADR-0270, ADR-0277): a listed row as a
 * {@link StoredVersionSummary} (with the reserved `workspace` when a row has one), and a packed
 * row's text with a codec failure told as a damaged version.
 * @see SPEC §8
 */
import type { RunStatus, VersionCause } from "@jr2/wire";
import { DamagedRunError, type RunBlob } from "./run-store.js";
import { type PackedRow, unpackVersion } from "./version-codec.js";
import { type StoredVersionSummary, type VersionedBlob, workspaceOfBlob } from "./versions.js";

/** A listed `run_versions` row. */
export interface SummaryRow {
  version: number;
  at: string;
  status: string;
  value: string;
  cause: string;
  workspace: string | null;
}

/** A read row as a {@link StoredVersionSummary}. */
export function summaryOfRow(r: SummaryRow): StoredVersionSummary {
  return {
    version: r.version,
    at: r.at,
    status: r.status as RunStatus,
    value: JSON.parse(r.value) as unknown,
    cause: JSON.parse(r.cause) as VersionCause,
    ...(r.workspace === null || r.workspace === undefined
      ? {}
      : { workspace: JSON.parse(r.workspace) as Record<string, string> }),
  };
}

/** The `workspace` column of a new row: {@link workspaceOfBlob} as JSON, or null. */
export function workspaceColumn(blob: VersionedBlob): string | null {
  const workspace = workspaceOfBlob(blob);
  return workspace ? JSON.stringify(workspace) : null;
}

/**
 * The blob text of version `row` of `runId` (`keyText` reads its key's text).
 * @throws DamagedRunError naming the run and version when its bytes or its key are not there
 */
export function unpackStored(
  runId: string,
  row: PackedRow,
  keyText: (v: number) => string | undefined,
): string {
  try {
    return unpackVersion(row, keyText);
  } catch (error) {
    throw new DamagedRunError(
      runId,
      `its version ${row.version} cannot be read (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

/** A stored blob text as a version's cause compares it; undefined when it is not JSON (damaged). */
export function previousBlob(text: string): RunBlob | undefined {
  try {
    return JSON.parse(text) as RunBlob;
  } catch {
    return undefined;
  }
}
