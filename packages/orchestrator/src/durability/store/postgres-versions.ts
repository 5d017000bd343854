/**
 * The PostgreSQL store's run versions (ADR-0270, ADR-0277), as SQLite's: the insert a save runs
 * in its transaction (the next number is the run's highest + 1; saves of one run are serialized
 * by the store; the blob packed by `version-codec.ts`), the settled run's fold, listing, one
 * version whole, and retention's delete by age.
 * @see SPEC §8
 */
import type { VersionCause } from "@jr2/wire";
import type { Sql } from "./postgres-connection.js";
import { SETTLED_BEFORE } from "./postgres-events.js";
import { decodeRunBlob, type RunBlob, type StoredRunVersion } from "./run-store.js";
import {
  foldVersions,
  type PackedRow,
  packVersion,
  unpackVersion,
  type VersionCodec,
} from "./version-codec.js";
import { type SummaryRow, summaryOfRow, unpackStored, workspaceColumn } from "./version-rows.js";
import { isSettled, type StoredVersionSummary, valueOfBlob } from "./versions.js";

/** A stored row with its codec columns: the codec's row as PostgreSQL types it, and its cause. */
interface CodecRow extends Omit<PackedRow, "codec"> {
  codec: string | null;
  cause: string;
}

const CODEC_COLUMNS = "version, codec, base, blob, packed, cause";

/** Inserts `blob` as its run's next version inside the caller's transaction; folds once settled. */
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
  const keys = await sql.query<CodecRow>(
    `SELECT ${CODEC_COLUMNS} FROM run_versions WHERE run_id = $1 AND codec = 'deflate' ORDER BY version DESC LIMIT 1`,
    [blob.runId],
  );
  const key = keys.rows[0];
  const packing = packVersion(
    JSON.stringify(blob),
    version,
    key ? { version: key.version, text: unpackVersion(asPacked(key), () => undefined) } : undefined,
  );
  await sql.query(
    `INSERT INTO run_versions (run_id, version, at, status, value, cause, blob, codec, base, packed, workspace)
     VALUES ($1, $2, $3, $4, $5, $6, '', $7, $8, $9, $10)`,
    [
      blob.runId,
      version,
      blob.updatedAt,
      blob.status,
      JSON.stringify(valueOfBlob(blob)),
      JSON.stringify(causeOf(version === 1)),
      packing.codec,
      packing.base,
      packing.packed,
      workspaceColumn(blob),
    ],
  );
  if (isSettled(blob.status)) await fold(sql, blob.runId, versionsKept);
  return version;
}

/** Folds a settled run's versions ({@link foldVersions}): re-keys first, then deletes. */
async function fold(sql: Sql, runId: string, versionsKept: number): Promise<void> {
  const { rows } = await sql.query<CodecRow>(
    `SELECT ${CODEC_COLUMNS} FROM run_versions WHERE run_id = $1 ORDER BY version`,
    [runId],
  );
  const plan = foldVersions(
    rows.map((r) => ({ ...asPacked(r), cause: JSON.parse(r.cause) as VersionCause })),
    versionsKept,
  );
  for (const r of plan.rewrite)
    await sql.query(
      "UPDATE run_versions SET codec = $1, base = $2, packed = $3, blob = '' WHERE run_id = $4 AND version = $5",
      [r.codec, r.base, r.packed, runId, r.version],
    );
  if (plan.drop.length > 0)
    await sql.query("DELETE FROM run_versions WHERE run_id = $1 AND version = ANY($2::int[])", [
      runId,
      plan.drop,
    ]);
}

/** The run's kept versions, oldest first, without their blobs. */
export async function listVersions(sql: Sql, runId: string): Promise<StoredVersionSummary[]> {
  const { rows } = await sql.query<SummaryRow>(
    "SELECT version, at, status, value, cause, workspace FROM run_versions WHERE run_id = $1 ORDER BY version",
    [runId],
  );
  return rows.map(summaryOfRow);
}

/** One kept version whole. @throws DamagedRunError when its blob cannot be decoded */
export async function getVersion(
  sql: Sql,
  runId: string,
  version: number,
): Promise<StoredRunVersion | undefined> {
  const { rows } = await sql.query<SummaryRow & CodecRow>(
    `SELECT at, status, value, workspace, ${CODEC_COLUMNS} FROM run_versions WHERE run_id = $1 AND version = $2`,
    [runId, version],
  );
  const row = rows[0];
  if (!row) return undefined;
  let key: string | undefined;
  if (row.codec === "deflate-dict" && row.base !== null) {
    const base = await sql.query<CodecRow>(
      `SELECT ${CODEC_COLUMNS} FROM run_versions WHERE run_id = $1 AND version = $2`,
      [runId, row.base],
    );
    key = base.rows[0] ? unpackStored(runId, asPacked(base.rows[0]), () => undefined) : undefined;
  }
  const text = unpackStored(runId, asPacked(row), () => key);
  return { ...summaryOfRow(row), blob: decodeRunBlob(runId, text) };
}

/** Deletes the versions of settled runs updated before `before` (ISO-8601); the rows deleted. */
export async function pruneVersionRows(sql: Sql, before: string): Promise<number> {
  const result = await sql.query(`DELETE FROM run_versions WHERE run_id IN (${SETTLED_BEFORE})`, [before]);
  return result.rowCount ?? 0;
}

/** A row's codec columns typed. */
function asPacked(r: CodecRow): PackedRow {
  return { version: r.version, codec: r.codec as VersionCodec, base: r.base, blob: r.blob, packed: r.packed };
}
