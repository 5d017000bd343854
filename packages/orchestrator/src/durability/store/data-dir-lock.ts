/**
 * SQLite is single-writer (issue 15, ADR-0280): `jr2 serve` holds an exclusive lock on its data
 * dir for its whole life, and a second one on the same dir is refused naming the holder.
 *
 * The lock is SQLite's own: `jr2.lock`, a tiny database opened with `locking_mode=EXCLUSIVE`
 * and written once, so this process keeps the file's POSIX lock until it closes it — and the
 * kernel drops it when the process dies, SIGKILL included: nothing stale to clean up by hand.
 * Who holds it (pid, host, since) is written beside it in `jr2.lock.holder`, read only to name
 * the holder in the refusal (inside containers every pid is 1: the host tells them apart).
 * `jr2 store check` and `backup` open `jr2.sqlite`, not this file, so they work on a served store.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

/** The lock database inside the data dir. */
export const LOCK_FILE = "jr2.lock";
/** Beside it: `{ pid, host, since }` of the holder, JSON. */
export const LOCK_HOLDER_FILE = "jr2.lock.holder";

/** A held data-dir lock. */
export interface DataDirLock {
  /** `<dataDir>/jr2.lock`. */
  path: string;
  /** Lets go (closes the lock database, removes the holder file); safe to call twice. */
  release(): void;
}

/** Who holds a lock, as written in {@link LOCK_HOLDER_FILE}. */
export interface LockHolder {
  pid: number;
  host: string;
  /** ISO time the lock was taken. */
  since: string;
}

/**
 * Takes the data dir's lock (creating the dir if missing) without waiting.
 * @param holder - written beside the lock (default this process: its pid and host name)
 * @throws Error naming the data dir, the lock file, the holder's pid and host, and what to do,
 *   when another process (or another lock in this one) holds it
 */
export function lockDataDir(
  dataDir: string,
  holder: LockHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString() },
): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  const holderPath = join(dataDir, LOCK_HOLDER_FILE);
  // timeout 0: a held lock answers SQLITE_BUSY at once instead of after better-sqlite3's 5 s.
  const db = new Database(path, { timeout: 0 });
  try {
    // A memory journal leaves no `jr2.lock-journal` beside it (set before the locking mode).
    db.pragma("journal_mode = MEMORY");
    db.pragma("locking_mode = EXCLUSIVE");
    // The first write takes the EXCLUSIVE lock; in this mode it is kept until close.
    db.exec("CREATE TABLE IF NOT EXISTS lock (taken TEXT); DELETE FROM lock;");
    db.prepare("INSERT INTO lock (taken) VALUES (?)").run(holder.since);
  } catch (error) {
    db.close();
    if ((error as { code?: unknown }).code === "SQLITE_BUSY")
      throw new Error(refusal(dataDir, path, holderPath));
    throw new Error(`cannot lock the data dir ${dataDir} (${path}): ${(error as Error).message}`);
  }
  writeFileSync(holderPath, `${JSON.stringify(holder)}\n`, { mode: 0o600 });
  let held = true;
  return {
    path,
    release() {
      if (!held) return;
      held = false;
      rmSync(holderPath, { force: true });
      db.close();
    },
  };
}

/** The refusal: who holds it (when its holder file says) and the two ways on. */
function refusal(dataDir: string, path: string, holderPath: string): string {
  const holder = readHolder(holderPath);
  const who = holder
    ? `pid ${holder.pid} on host ${holder.host}, since ${holder.since}`
    : `a process that has not said who it is (no readable ${holderPath})`;
  return (
    `the data dir ${dataDir} is in use by another jr2 serve (${who}; lock ${path}). ` +
    "SQLite is single-writer: stop that Orchestrator first, or give this one its own JR2_DATA_DIR; " +
    "several Orchestrators share one store only on PostgreSQL (JR2_STORE_URL=postgres://…). " +
    "The lock goes with its process: nothing to delete by hand."
  );
}

function readHolder(holderPath: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(holderPath, "utf8")) as Partial<LockHolder>;
    if (typeof parsed.pid !== "number" || typeof parsed.host !== "string") return undefined;
    return { pid: parsed.pid, host: parsed.host, since: String(parsed.since ?? "?") };
  } catch {
    return undefined;
  }
}
