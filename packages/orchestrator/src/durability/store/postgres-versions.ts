/**
 * The PostgreSQL store's run versions (ADR-0270), as SQLite's: the insert a save runs in its
 * transaction (the next number is the run's highest + 1; saves of one run are serialized by
 * the store), the settled run's pruning to its last `versionsKept`, listing, one version whole,
 * and retention's delete by age.
 * @see SPEC §8
 */
import type { RunStatus, VersionCause } from "@jr2/wire";
import type { Sql } from "./postgres-connection.js";
import { SETTLED_BEFORE } from "./postgres-events.js";
import { decodeRunBlob, type RunBlob, type StoredRunVersion } from "./run-store.js";
import { isSettled, type StoredVersionSummary, valueOfBlob } from "./versions.js";

/** A listed `run_versions` row. */
interface SummaryRow {
  version: number;
  at: string;
  status: string;
  value: string;
  cause: string;
}

/** Inserts `blob` as its run's next version inside the caller's transaction; prunes once settled. */
export async function insertVersion(
  sql: Sql,
  blob: RunBlob,
  versionsKept: number,
  causeOf: (first: boolean) => VersionCause,
): Promise<number> {
  const { rows } = await sql.query<{ next: number }>(
    "SELECT COALESCE(MAX(version), 0) + 1 AS next FROM run_versions WHERE run_id = $1",
    [blob.runId],
  );
  const version = rows[0]?.next ?? 1;
  await sql.query(
    "INSERT INTO run_versions (run_id, version, at, status, value, cause, blob) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    [
      blob.runId,
      version,
      blob.updatedAt,
      blob.status,
      JSON.stringify(valueOfBlob(blob)),
      JSON.stringify(causeOf(version === 1)),
      JSON.stringify(blob),
    ],
  );
  if (isSettled(blob.status))
    await sql.query("DELETE FROM run_versions WHERE run_id = $1 AND version <= $2", [
      blob.runId,
      version - versionsKept,
    ]);
  return version;
}

/** The run's kept versions, oldest first, without their blobs. */
export async function listVersions(sql: Sql, runId: string): Promise<StoredVersionSummary[]> {
  const { rows } = await sql.query<SummaryRow>(
    "SELECT version, at, status, value, cause FROM run_versions WHERE run_id = $1 ORDER BY version",
    [runId],
  );
  return rows.map(summaryOf);
}

/** One kept version whole. @throws DamagedRunError when its blob cannot be decoded */
export async function getVersion(
  sql: Sql,
  runId: string,
  version: number,
): Promise<StoredRunVersion | undefined> {
  const { rows } = await sql.query<SummaryRow & { blob: string }>(
    "SELECT version, at, status, value, cause, blob FROM run_versions WHERE run_id = $1 AND version = $2",
    [runId, version],
  );
  const row = rows[0];
  return row ? { ...summaryOf(row), blob: decodeRunBlob(runId, row.blob) } : undefined;
}

/** Deletes the versions of settled runs updated before `before` (ISO-8601); the rows deleted. */
export async function pruneVersionRows(sql: Sql, before: string): Promise<number> {
  const result = await sql.query(`DELETE FROM run_versions WHERE run_id IN (${SETTLED_BEFORE})`, [before]);
  return result.rowCount ?? 0;
}

/** A read row as a {@link StoredVersionSummary}. */
function summaryOf(r: SummaryRow): StoredVersionSummary {
  return {
    version: r.version,
    at: r.at,
    status: r.status as RunStatus,
    value: JSON.parse(r.value) as unknown,
    cause: JSON.parse(r.cause) as VersionCause,
  };
}
