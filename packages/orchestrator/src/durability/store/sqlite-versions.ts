/**
 * The SQLite store's run versions (ADR-0270, ADR-0277): the `run_versions` table (migrations 8
 * and 9) behind the RunStore port's `versions` and `version`, the insert a save runs inside its
 * own transaction (the next number is the run's highest + 1; the blob packed by
 * `version-codec.ts`), the settled run's fold, and retention's delete by age. Plain SQL a
 * server database runs as well (issue 15).
 * @see SPEC §8
 */
import type { VersionCause } from "@jr2/wire";
import type Database from "better-sqlite3";
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

/** A stored row with its codec columns. */
type CodecRow = PackedRow & { cause: string };

/** The version statements over one connection (its schema migrated already). */
export interface SqliteVersions {
  /** Inserts `blob` as its run's next version; folds once settled. Runs inside the caller's transaction. */
  insert(blob: RunBlob, causeOf: (first: boolean) => VersionCause): number;
  list(runId: string): StoredVersionSummary[];
  get(runId: string, version: number): StoredRunVersion | undefined;
  /** Deletes the versions of settled runs updated before `before` (ISO-8601); returns the rows deleted. */
  prune(before: string): number;
}

/** Prepares the version statements on `db`; a settled run keeps its `versionsKept` newest (step versions folded). */
export function sqliteVersions(db: Database.Database, versionsKept: number): SqliteVersions {
  const selectNext = db.prepare<[string], { next: number }>(
    "SELECT COALESCE(MAX(version), 0) + 1 AS next FROM run_versions WHERE run_id = ?",
  );
  const selectKey = db.prepare<[string], CodecRow>(
    `SELECT version, codec, base, blob, packed, cause FROM run_versions
     WHERE run_id = ? AND codec = 'deflate' ORDER BY version DESC LIMIT 1`,
  );
  const insertVersion = db.prepare(
    `INSERT INTO run_versions (run_id, version, at, status, value, cause, blob, codec, base, packed, workspace)
     VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?)`,
  );
  const selectCodecRows = db.prepare<[string], CodecRow>(
    "SELECT version, codec, base, blob, packed, cause FROM run_versions WHERE run_id = ? ORDER BY version",
  );
  const selectCodecRow = db.prepare<[string, number], CodecRow>(
    "SELECT version, codec, base, blob, packed, cause FROM run_versions WHERE run_id = ? AND version = ?",
  );
  const rewriteRow = db.prepare<[string | null, number | null, Buffer, string, number]>(
    "UPDATE run_versions SET codec = ?, base = ?, packed = ?, blob = '' WHERE run_id = ? AND version = ?",
  );
  const deleteOne = db.prepare<[string, number]>("DELETE FROM run_versions WHERE run_id = ? AND version = ?");
  const selectList = db.prepare<[string], SummaryRow>(
    "SELECT version, at, status, value, cause, workspace FROM run_versions WHERE run_id = ? ORDER BY version",
  );
  const selectOne = db.prepare<[string, number], SummaryRow & CodecRow>(
    `SELECT version, at, status, value, cause, workspace, codec, base, blob, packed
     FROM run_versions WHERE run_id = ? AND version = ?`,
  );
  const deleteSettled = db.prepare<[string]>(
    `DELETE FROM run_versions WHERE run_id IN
       (SELECT run_id FROM runs WHERE status NOT IN ('running', 'drifted') AND updated_at < ?)`,
  );
  const keyText = (runId: string) => (version: number) => {
    const row = selectCodecRow.get(runId, version);
    return row ? unpackVersion(asPacked(row), () => undefined) : undefined;
  };
  const fold = (runId: string) => {
    const rows = selectCodecRows
      .all(runId)
      .map((r) => ({ ...asPacked(r), cause: JSON.parse(r.cause) as VersionCause }));
    const plan = foldVersions(rows, versionsKept);
    for (const r of plan.rewrite) rewriteRow.run(r.codec, r.base, r.packed, runId, r.version);
    for (const v of plan.drop) deleteOne.run(runId, v);
  };
  return {
    insert(blob, causeOf) {
      const version = selectNext.get(blob.runId)?.next ?? 1;
      const cause = causeOf(version === 1);
      const key = selectKey.get(blob.runId);
      const packing = packVersion(
        JSON.stringify(blob),
        version,
        key ? { version: key.version, text: unpackVersion(asPacked(key), () => undefined) } : undefined,
      );
      insertVersion.run(
        blob.runId,
        version,
        blob.updatedAt,
        blob.status,
        JSON.stringify(valueOfBlob(blob)),
        JSON.stringify(cause),
        packing.codec,
        packing.base,
        packing.packed,
        workspaceColumn(blob),
      );
      if (isSettled(blob.status)) fold(blob.runId);
      return version;
    },
    list: (runId) => selectList.all(runId).map(summaryOfRow),
    get(runId, version) {
      const row = selectOne.get(runId, version);
      if (!row) return undefined;
      const text = unpackStored(runId, asPacked(row), keyText(runId));
      return { ...summaryOfRow(row), blob: decodeRunBlob(runId, text) };
    },
    prune: (before) => deleteSettled.run(before).changes,
  };
}

/** A row's codec columns typed (SQLite hands BLOBs back as Buffers). */
function asPacked(r: CodecRow): PackedRow {
  return {
    version: r.version,
    codec: r.codec as VersionCodec,
    base: r.base,
    blob: r.blob,
    packed: r.packed ? Buffer.from(r.packed) : null,
  };
}
