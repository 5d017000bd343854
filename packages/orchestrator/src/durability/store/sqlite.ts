/**
 * The embedded SQLite store (SPEC §8): one file in `JR2_DATA_DIR`, WAL, `synchronous=FULL`;
 * opening refuses a missing store a marker says existed, a foreign or damaged file, and a newer
 * schema (each error names the path and the remedy); then the RunStore port over prepared
 * statements. Schema and migrations: `sqlite-migrations.ts`. Maintenance: `maintenance.ts`.
 * @see SPEC §8
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PickAnswer, RunStatus } from "@jr2/wire";
import Database from "better-sqlite3";
import { turnRecordsOfSave } from "../transcript-rows.js";
import type { UsageRecord } from "../usage-totals.js";
import { usageValues } from "./row-columns.js";
import {
  checkCondition,
  decodeRunBlob,
  type RunBlob,
  type RunStore,
  type SaveCondition,
  type StoreOptions,
  summaryOfBlob,
} from "./run-store.js";
import { sqliteEventLog } from "./sqlite-events.js";
import { sqliteHistories } from "./sqlite-histories.js";
import { listRuns } from "./sqlite-list.js";
import { migrate } from "./sqlite-migrations.js";
import { sqliteStartKeys } from "./sqlite-start-keys.js";
import { sqliteTranscripts } from "./sqlite-transcripts.js";
import { sqliteVersions } from "./sqlite-versions.js";
import { causeOfSave } from "./version-cause.js";
import { previousBlob } from "./version-rows.js";
import { DEFAULT_VERSIONS_KEPT, isSettled } from "./versions.js";

/** The marker jr2 writes beside a store it created: an empty or missing store file then is refused. */
export const STORE_MARKER = "jr2-store.marker";

/** What to do about a store jr2 cannot use, said in every such error. */
const REMEDY =
  "Stop jr2 and move the file aside (keep it; `jr2 store check` reads it), then restore a backup " +
  '(`jr2 store backup` writes one; see README "Backing up the store") — or, to start with no runs, ' +
  "move it aside and run `jr2 serve --new-store`";

/**
 * The error for a store file jr2 cannot use: names the path, what SQLite said, and what to do.
 * Recognizes a damaged file (`database disk image is malformed`), a foreign one (`file is not
 * a database`, `no such table`), and a failing disk (`disk I/O error`).
 */
export function storeFileError(path: string, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const what =
    code === "SQLITE_CORRUPT" || /malformed/.test(message)
      ? "the file is damaged"
      : code === "SQLITE_NOTADB" || /not a database/.test(message)
        ? "the file is not a SQLite database"
        : typeof code === "string" && code.startsWith("SQLITE_IOERR")
          ? "the disk failed while reading it"
          : /no such table/.test(message)
            ? "the file is not a jr2 store (its tables are missing)"
            : "it cannot be opened";
  return new Error(
    `cannot use the run store at ${path}: ${what} (${message}${typeof code === "string" ? `, ${code}` : ""}). ${REMEDY}.`,
    { cause: error },
  );
}

/** The SQLite store: the port, plus its file and connection (`jr2 store check`/`backup`, tests). */
export interface SqliteRunStore extends RunStore {
  readonly path: string;
  readonly db: Database.Database;
}

/** Options of {@link openSqliteStore}. */
export interface OpenStoreOptions extends StoreOptions {
  /**
   * Start a new store although the data dir's marker says one existed and the file is empty
   * or gone (`jr2 serve --new-store`). Default false: refused.
   */
  newStore?: boolean;
}

/** The file name of the store inside `JR2_DATA_DIR`. */
export const STORE_FILE = "jr2.sqlite";

/**
 * Opens (creating if needed) the embedded SQLite store: one file, WAL, `synchronous=FULL`
 * (a pick is answered only after its save is durable), migrations applied in order.
 * @param dataDir a directory (created if missing); the file is `<dataDir>/jr2.sqlite`
 * @throws Error naming the path when the file cannot be opened or is from a newer jr2
 */
export function openSqliteStore(dataDir: string, options: OpenStoreOptions = {}): SqliteRunStore {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, STORE_FILE);
  const marker = join(dataDir, STORE_MARKER);
  refuseLostStore(path, marker, options);
  const db = openDatabase(path);
  if (!existsSync(marker))
    writeFileSync(marker, `${JSON.stringify({ store: STORE_FILE, createdAt: new Date().toISOString() })}\n`, {
      mode: 0o600,
    });
  return sqliteRunStore(path, db, options.versionsKept ?? DEFAULT_VERSIONS_KEPT);
}

/** An empty or missing store file where the marker says one existed: its runs would be lost. */
function refuseLostStore(path: string, marker: string, options: OpenStoreOptions): void {
  const empty = !existsSync(path) || statSync(path).size === 0;
  if (empty && existsSync(marker) && !options.newStore)
    throw new Error(
      `the run store at ${path} is ${existsSync(path) ? "empty (0 bytes)" : "missing"}, but ${marker} says ` +
        "this data dir held one: its runs would be lost. Restore a backup to that path (see README " +
        '"Backing up the store"), or start with no runs with `jr2 serve --new-store` (JR2_NEW_STORE=1).',
    );
}

/** Opens the file (WAL, `synchronous=FULL`), refuses a foreign one, migrates, and reads it once. */
function openDatabase(path: string): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.pragma("busy_timeout = 5000");
    refuseForeign(db, path);
    migrate(db, path);
    // Reads what restore reads first, so a damaged table is refused here, naming the file.
    db.prepare("SELECT count(*) FROM runs").get();
    db.prepare("SELECT count(*) FROM pick_answers").get();
  } catch (error) {
    if (error instanceof Error && error.message.startsWith("the run store at ")) throw error;
    throw storeFileError(path, error);
  }
  return db;
}

/** The RunStore port over `db`'s prepared statements; a save is one transaction. */
function sqliteRunStore(path: string, db: Database.Database, versionsKept: number): SqliteRunStore {
  const upsertRun = db.prepare(
    `INSERT INTO runs (run_id, workflow, status, updated_at, outcome, final_state, blob)
     VALUES (@runId, @workflow, @status, @updatedAt, @outcome, @finalState, @blob)
     ON CONFLICT(run_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at,
       outcome = excluded.outcome, final_state = excluded.final_state, blob = excluded.blob`,
  );
  const insertPick = db.prepare(
    "INSERT OR IGNORE INTO pick_answers (run_id, iid, turn_id, tool_call_id, scope, answer) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const selectRun = db.prepare<[string], { blob: string }>("SELECT blob FROM runs WHERE run_id = ?");
  const selectStatus = db.prepare<[string], { status: RunStatus }>(
    "SELECT status FROM runs WHERE run_id = ?",
  );
  const selectLive = db.prepare<[], { run_id: string; blob: string }>(
    "SELECT run_id, blob FROM runs WHERE status = 'running'",
  );
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
  const insertUsage = db.prepare(
    `INSERT OR IGNORE INTO usage_events (run_id, iid, submission_id, position, prompt_tokens, cached_tokens, completion_tokens, finish_reason, turn_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const selectUsage = db.prepare<
    [string],
    {
      iid: string;
      submission_id: string;
      position: string;
      prompt_tokens: number | null;
      cached_tokens: number | null;
      completion_tokens: number | null;
      finish_reason: string | null;
      turn_id: string | null;
    }
  >("SELECT * FROM usage_events WHERE run_id = ? ORDER BY rowid");
  const recordTx = db.transaction((runId: string, records: readonly UsageRecord[]) => {
    for (const r of records) insertUsage.run(...usageValues(runId, r));
  });
  const eventLog = sqliteEventLog(db);
  const transcripts = sqliteTranscripts(db);
  const versions = sqliteVersions(db, versionsKept);
  const histories = sqliteHistories(db);
  const saveTx = db.transaction(
    (
      blob: RunBlob,
      picks: Parameters<RunStore["save"]>[1],
      usage: readonly UsageRecord[],
      events: Parameters<RunStore["appendEvents"]>[1],
      cause: Parameters<RunStore["save"]>[4],
      when: SaveCondition | undefined,
      turns: Parameters<RunStore["save"]>[6],
    ) => {
      // Inside the transaction: the status read and the write are one (SQLite serializes writers).
      if (when) checkCondition(blob.runId, when, selectStatus.get(blob.runId)?.status);
      // The blob saved before: a ledger entry new since is an admission (its version's cause).
      const before = cause ? undefined : selectRun.get(blob.runId);
      const previous = before ? previousBlob(before.blob) : undefined;
      const { outcome, finalState } = summaryOfBlob(blob);
      upsertRun.run({
        ...blob,
        outcome: outcome ?? null,
        finalState: finalState === undefined ? null : JSON.stringify(finalState),
        blob: JSON.stringify(blob),
      });
      for (const p of picks ?? [])
        insertPick.run(blob.runId, p.iid, p.turnId ?? "", p.toolCallId, p.scope, JSON.stringify(p.answer));
      transcripts.upsertTurns(blob.runId, turnRecordsOfSave(picks ?? [], turns));
      recordTx(blob.runId, usage);
      eventLog.insert(blob.runId, events);
      versions.insert(blob, (first) => cause ?? causeOfSave(blob, events, first, previous));
      // A settled run's conversations are never admitted again (ADR-0176).
      if (isSettled(blob.status)) histories.dropRun(blob.runId);
    },
  );

  return {
    path,
    startKeys: sqliteStartKeys(db),
    conversationHistory: { writeHistory: histories.writeHistory, histories: histories.histories },
    db,
    async save(blob, picks, usage = [], events = [], cause, when, turns) {
      saveTx(blob, picks, usage, events, cause, when, turns);
    },
    versions: async (runId) => versions.list(runId),
    version: async (runId, version) => versions.get(runId, version),
    async appendEvents(runId, events) {
      eventLog.append(runId, events);
    },
    events: async (runId, from, limit) => eventLog.page(runId, from, limit),
    lastEventSeq: async (runId) => eventLog.last(runId),
    // Log, transcripts, Turn records, versions and histories of a settled run go together.
    pruneEvents: async (before) =>
      db.transaction(
        () =>
          eventLog.prune(before) +
          transcripts.prune(before) +
          versions.prune(before) +
          histories.prune(before),
      )(),
    recordTranscript: transcripts.recordTranscript,
    transcriptKeys: transcripts.transcriptKeys,
    transcript: transcripts.transcript,
    prefixes: transcripts.prefixes,
    recordTurns: transcripts.recordTurns,
    turns: transcripts.turns,
    async recordUsage(runId, records) {
      recordTx(runId, records);
    },
    async usage(runId) {
      return selectUsage.all(runId).map((r) => ({
        iid: r.iid,
        submissionId: r.submission_id,
        position: r.position,
        promptTokens: r.prompt_tokens,
        cachedTokens: r.cached_tokens,
        completionTokens: r.completion_tokens,
        ...(r.finish_reason === null ? {} : { finishReason: r.finish_reason }),
        ...(r.turn_id === null ? {} : { turnId: r.turn_id }),
      }));
    },
    async load(runId) {
      const row = selectRun.get(runId);
      return row ? decodeRunBlob(runId, row.blob) : undefined;
    },
    async list(filter) {
      try {
        return listRuns(db, filter);
      } catch (error) {
        throw storeFileError(path, error);
      }
    },
    async live() {
      // A damaged row is left out here; restore reports it by id (it reads through `load`).
      return selectLive.all().flatMap((r) => {
        try {
          return [decodeRunBlob(r.run_id, r.blob)];
        } catch {
          return [];
        }
      });
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

/** A SQLite file with tables but no `schema_migrations` is another program's: never migrated into. */
function refuseForeign(db: Database.Database, path: string): void {
  const tables = db
    .prepare<[], { name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    .all()
    .map((t) => t.name);
  if (tables.length > 0 && !tables.includes("schema_migrations"))
    throw storeFileError(path, new Error(`no such table: schema_migrations (it holds ${tables.join(", ")})`));
}
