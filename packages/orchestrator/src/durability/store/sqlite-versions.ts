/**
 * The SQLite store's run versions (ADR-0270): the `run_versions` table (migration 8) behind the
 * RunStore port's `versions` and `version`, the insert a save runs inside its own transaction
 * (the next number is the run's highest + 1), the settled run's pruning to its last N, and
 * retention's delete by age. Plain SQL a server database runs as well (issue 15).
 * @see SPEC §8
 */
import type { RunStatus, VersionCause } from "@jr2/wire";
import type Database from "better-sqlite3";
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

/** The version statements over one connection (its schema migrated already). */
export interface SqliteVersions {
  /** Inserts `blob` as its run's next version; prunes once settled. Runs inside the caller's transaction. */
  insert(blob: RunBlob, causeOf: (first: boolean) => VersionCause): number;
  list(runId: string): StoredVersionSummary[];
  get(runId: string, version: number): StoredRunVersion | undefined;
  /** Deletes the versions of settled runs updated before `before` (ISO-8601); returns the rows deleted. */
  prune(before: string): number;
}

/** Prepares the version statements on `db`; a settled run keeps its `versionsKept` newest. */
export function sqliteVersions(db: Database.Database, versionsKept: number): SqliteVersions {
  const selectNext = db.prepare<[string], { next: number }>(
    "SELECT COALESCE(MAX(version), 0) + 1 AS next FROM run_versions WHERE run_id = ?",
  );
  const insertVersion = db.prepare(
    "INSERT INTO run_versions (run_id, version, at, status, value, cause, blob) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const deleteOlder = db.prepare<[string, number]>(
    "DELETE FROM run_versions WHERE run_id = ? AND version <= ?",
  );
  const selectList = db.prepare<[string], SummaryRow>(
    "SELECT version, at, status, value, cause FROM run_versions WHERE run_id = ? ORDER BY version",
  );
  const selectOne = db.prepare<[string, number], SummaryRow & { blob: string }>(
    "SELECT version, at, status, value, cause, blob FROM run_versions WHERE run_id = ? AND version = ?",
  );
  const deleteSettled = db.prepare<[string]>(
    `DELETE FROM run_versions WHERE run_id IN
       (SELECT run_id FROM runs WHERE status NOT IN ('running', 'drifted') AND updated_at < ?)`,
  );
  return {
    insert(blob, causeOf) {
      const version = selectNext.get(blob.runId)?.next ?? 1;
      const cause = causeOf(version === 1);
      insertVersion.run(
        blob.runId,
        version,
        blob.updatedAt,
        blob.status,
        JSON.stringify(valueOfBlob(blob)),
        JSON.stringify(cause),
        JSON.stringify(blob),
      );
      if (isSettled(blob.status)) deleteOlder.run(blob.runId, version - versionsKept);
      return version;
    },
    list: (runId) => selectList.all(runId).map(summaryOf),
    get(runId, version) {
      const row = selectOne.get(runId, version);
      return row ? { ...summaryOf(row), blob: decodeRunBlob(runId, row.blob) } : undefined;
    },
    prune: (before) => deleteSettled.run(before).changes,
  };
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
