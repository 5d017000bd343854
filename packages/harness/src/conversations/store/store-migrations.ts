import type Database from "better-sqlite3";

/**
 * The Harness store's schema (issue 27, ADR-0175), one migration per released step. A
 * migration is never edited once released: a change is a new one. `user_version` holds the
 * number applied; a file from a newer Harness is refused (its tables may mean something else).
 * @see docs/adr/0175-harness-durable-state.md
 */

const MIGRATIONS: readonly string[] = [
  // 1: conversations, their stream log, Submissions, replayed messages; the generic records.
  `
  CREATE TABLE conversations (
    iid TEXT PRIMARY KEY,
    seat TEXT,
    touched_at INTEGER NOT NULL
  );
  CREATE TABLE stream_events (
    iid TEXT NOT NULL,
    position INTEGER NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (iid, position)
  ) WITHOUT ROWID;
  CREATE TABLE submissions (
    iid TEXT NOT NULL,
    submission_id TEXT NOT NULL,
    admitted INTEGER NOT NULL,
    settled INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (iid, submission_id)
  );
  CREATE INDEX submissions_open ON submissions (settled) WHERE settled = 0;
  CREATE TABLE messages (
    iid TEXT NOT NULL,
    position INTEGER NOT NULL,
    submission_id TEXT NOT NULL,
    json TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    PRIMARY KEY (iid, position)
  ) WITHOUT ROWID;
  CREATE TABLE harness_records (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (kind, key)
  ) WITHOUT ROWID;
  `,
];

/** The newest schema this Harness knows. */
export const STORE_SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Applies the migrations `db` lacks, each in its own transaction.
 * @throws Error naming the file when it was written by a newer Harness (`user_version` too high).
 */
export function migrateHarnessStore(db: Database.Database, path: string): void {
  const at = db.pragma("user_version", { simple: true }) as number;
  if (at > STORE_SCHEMA_VERSION)
    throw new Error(
      `the Harness store at ${path} has schema ${at}, newer than this Harness's ${STORE_SCHEMA_VERSION}: ` +
        "run the newer Harness, or give this one its own JR2_HARNESS_DATA_DIR",
    );
  for (let v = at; v < STORE_SCHEMA_VERSION; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v] ?? "");
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
