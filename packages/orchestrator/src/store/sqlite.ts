import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { PickAnswer } from "@jr2/wire";
import Database from "better-sqlite3";
import type { RunBlob, RunStore } from "./run-store.js";

/**
 * Schema migrations, versioned from day one. Append only: a released migration never changes.
 * @see SPEC §8
 */
const migrations: readonly string[] = [
  `CREATE TABLE runs (
     run_id TEXT PRIMARY KEY,
     workflow TEXT NOT NULL,
     status TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     blob TEXT NOT NULL
   );
   CREATE INDEX runs_status ON runs(status);
   CREATE TABLE pick_answers (
     run_id TEXT NOT NULL,
     iid TEXT NOT NULL,
     tool_call_id TEXT NOT NULL,
     answer TEXT NOT NULL,
     PRIMARY KEY (run_id, iid, tool_call_id)
   );`,
  // 2: the scope a pick was answered in, so a repeat after a restart is served only in it (§4.4).
  "ALTER TABLE pick_answers ADD COLUMN scope TEXT NOT NULL DEFAULT 'instance';",
  // 3: the Turn is part of the key (ADR-0252): a continued conversation's next Turn may reuse a
  // toolCallId. Rows from before carry no Turn (''), found only by a pick sent without turnId.
  `CREATE TABLE pick_answers_v3 (
     run_id TEXT NOT NULL,
     iid TEXT NOT NULL,
     turn_id TEXT NOT NULL,
     tool_call_id TEXT NOT NULL,
     scope TEXT NOT NULL,
     answer TEXT NOT NULL,
     PRIMARY KEY (run_id, iid, turn_id, tool_call_id)
   );
   INSERT INTO pick_answers_v3 (run_id, iid, turn_id, tool_call_id, scope, answer)
     SELECT run_id, iid, '', tool_call_id, scope, answer FROM pick_answers;
   DROP TABLE pick_answers;
   ALTER TABLE pick_answers_v3 RENAME TO pick_answers;`,
];

/** The file name of the store inside `JR2_DATA_DIR`. */
export const STORE_FILE = "jr2.sqlite";

/**
 * Opens (creating if needed) the embedded SQLite store: one file, WAL, `synchronous=FULL`
 * (a pick is answered only after its save is durable), migrations applied in order.
 * @param dataDir a directory (created if missing); the file is `<dataDir>/jr2.sqlite`
 * @throws Error naming the path when the file cannot be opened or is from a newer jr2
 */
export function openSqliteStore(dataDir: string): RunStore {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, STORE_FILE);
  let db: Database.Database;
  try {
    db = new Database(path);
  } catch (error) {
    throw new Error(`cannot open the run store at ${path}: ${String(error)}`, { cause: error });
  }
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 5000");
  migrate(db, path);

  const upsertRun = db.prepare(
    `INSERT INTO runs (run_id, workflow, status, updated_at, blob) VALUES (@runId, @workflow, @status, @updatedAt, @blob)
     ON CONFLICT(run_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at, blob = excluded.blob`,
  );
  const insertPick = db.prepare(
    "INSERT OR IGNORE INTO pick_answers (run_id, iid, turn_id, tool_call_id, scope, answer) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const selectRun = db.prepare<[string], { blob: string }>("SELECT blob FROM runs WHERE run_id = ?");
  const selectAll = db.prepare<[], { run_id: string; workflow: string; status: string; updated_at: string }>(
    "SELECT run_id, workflow, status, updated_at FROM runs ORDER BY updated_at DESC",
  );
  const selectLive = db.prepare<[], { blob: string }>("SELECT blob FROM runs WHERE status = 'running'");
  const selectPick = db.prepare<[string, string, string, string], { answer: string; scope: string }>(
    "SELECT answer, scope FROM pick_answers WHERE run_id = ? AND iid = ? AND turn_id = ? AND tool_call_id = ?",
  );
  // Without a turnId (an older Harness): today's per-iid lookup, the newest answer first.
  const selectPickAnyTurn = db.prepare<
    [string, string, string],
    { answer: string; scope: string; turn_id: string }
  >(
    `SELECT answer, scope, turn_id FROM pick_answers WHERE run_id = ? AND iid = ? AND tool_call_id = ?
     ORDER BY rowid DESC LIMIT 1`,
  );
  const saveTx = db.transaction((blob: RunBlob, picks: Parameters<RunStore["save"]>[1]) => {
    upsertRun.run({ ...blob, blob: JSON.stringify(blob) });
    for (const p of picks ?? [])
      insertPick.run(blob.runId, p.iid, p.turnId ?? "", p.toolCallId, p.scope, JSON.stringify(p.answer));
  });

  return {
    async save(blob, picks) {
      saveTx(blob, picks);
    },
    async load(runId) {
      const row = selectRun.get(runId);
      return row ? (JSON.parse(row.blob) as RunBlob) : undefined;
    },
    async list(filter) {
      return selectAll
        .all()
        .filter((r) => !filter?.status || r.status === filter.status)
        .map((r) => ({
          runId: r.run_id,
          workflow: r.workflow,
          status: r.status as RunBlob["status"],
          updatedAt: r.updated_at,
        }));
    },
    async live() {
      return selectLive.all().map((r) => JSON.parse(r.blob) as RunBlob);
    },
    async pickAnswer(runId, { iid, turnId, toolCallId }) {
      if (turnId !== undefined) {
        const row = selectPick.get(runId, iid, turnId, toolCallId);
        return row
          ? { iid, turnId, toolCallId, scope: row.scope, answer: JSON.parse(row.answer) as PickAnswer }
          : undefined;
      }
      const row = selectPickAnyTurn.get(runId, iid, toolCallId);
      return row
        ? {
            iid,
            turnId: row.turn_id === "" ? null : row.turn_id,
            toolCallId,
            scope: row.scope,
            answer: JSON.parse(row.answer) as PickAnswer,
          }
        : undefined;
    },
    async close() {
      if (db.open) db.close();
    },
  };
}

function migrate(db: Database.Database, path: string): void {
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)",
  );
  const row = db.prepare<[], { v: number | null }>("SELECT MAX(version) AS v FROM schema_migrations").get();
  const current = row?.v ?? 0;
  if (current > migrations.length) {
    throw new Error(
      `the run store at ${path} is at schema version ${current}, newer than this jr2 knows (${migrations.length}); upgrade jr2`,
    );
  }
  const apply = db.transaction(() => {
    for (let v = current + 1; v <= migrations.length; v++) {
      db.exec(migrations[v - 1]!);
      db.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)").run(
        v,
        new Date().toISOString(),
      );
    }
  });
  apply();
}
