/**
 * Store maintenance behind `jr2 store check` and `jr2 store backup` (issue 16 item 3,
 * ADR-0254): a read-only integrity check with a per-run decode, and an online backup through
 * SQLite's backup API (consistent while `jr2 serve` writes; WAL included).
 * @see SPEC §8
 */
import { chmodSync, closeSync, existsSync, openSync, rmSync } from "node:fs";
import Database from "better-sqlite3";
import { decodeRunBlob } from "./run-store.js";
import { storeFileError } from "./sqlite.js";

/** What `jr2 store check` found. `ok` only when SQLite's check passed and every run decodes. */
export interface StoreCheck {
  path: string;
  ok: boolean;
  /** `PRAGMA integrity_check` lines (`["ok"]` when sound). */
  integrity: string[];
  runs: number;
  live: number;
  /** Runs whose row does not decode: what restore reports as faulted. */
  damaged: Array<{ runId: string; reason: string }>;
}

/** Opens the file read-only, refusing a missing one. @throws Error naming the path and remedy */
function openReadOnly(path: string): Database.Database {
  if (!existsSync(path)) throw new Error(`no run store at ${path}; pass --data-dir DIR or --file FILE`);
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    db.prepare("SELECT count(*) FROM runs").get();
    return db;
  } catch (error) {
    throw storeFileError(path, error);
  }
}

/**
 * Checks the store file at `path` without changing it: SQLite's `integrity_check`, then each
 * run's blob decoded as restore decodes it.
 * @throws Error naming the path and the remedy when the file is not a readable jr2 store
 */
export function checkStore(path: string): StoreCheck {
  const db = openReadOnly(path);
  try {
    const integrity = db
      .prepare<[], { integrity_check: string }>("PRAGMA integrity_check")
      .all()
      .map((r) => r.integrity_check);
    const damaged: StoreCheck["damaged"] = [];
    let runs = 0;
    let live = 0;
    for (const row of db
      .prepare<[], { run_id: string; status: string; blob: string }>("SELECT run_id, status, blob FROM runs")
      .iterate()) {
      runs++;
      if (row.status === "running") live++;
      try {
        decodeRunBlob(row.run_id, row.blob);
      } catch (error) {
        damaged.push({ runId: row.run_id, reason: error instanceof Error ? error.message : String(error) });
      }
    }
    const ok = integrity.length === 1 && integrity[0] === "ok" && damaged.length === 0;
    return { path, ok, integrity, runs, live, damaged };
  } catch (error) {
    throw storeFileError(path, error);
  } finally {
    db.close();
  }
}

/**
 * Writes an online backup of the store at `path` to `file` (created mode 0600: it holds
 * transcripts and pick answers; an existing file is refused, never overwritten).
 * @returns the number of runs in the backup
 * @throws Error naming the path when the store cannot be read or `file` exists or cannot be written
 */
export async function backupStore(path: string, file: string): Promise<{ runs: number }> {
  if (existsSync(file)) throw new Error(`${file} exists; choose a new file (a backup never overwrites)`);
  const db = openReadOnly(path);
  try {
    // Created 0600 before SQLite writes a byte into it.
    closeSync(openSync(file, "wx", 0o600));
    await db.backup(file);
    chmodSync(file, 0o600);
  } catch (error) {
    rmSync(file, { force: true });
    throw new Error(
      `backing up ${path} to ${file} failed: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  } finally {
    db.close();
  }
  const copy = openReadOnly(file);
  try {
    return { runs: copy.prepare<[], { n: number }>("SELECT count(*) AS n FROM runs").get()?.n ?? 0 };
  } finally {
    copy.close();
  }
}
