import { closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import type { StreamEvent } from "@jr2/wire";
import Database from "better-sqlite3";
import type { HarnessRecord, HarnessStore, StoredConversation } from "./harness-store.js";
import { chainHash, HISTORY_SHA256_START, historyOfRows } from "./history-hash.js";
import { migrateHarnessStore } from "./store-migrations.js";
import { createWriteQueue, type WriteQueueEvents } from "./write-queue.js";

/** The store's file name inside `JR2_HARNESS_DATA_DIR`. */
export const HARNESS_STORE_FILE = "harness.sqlite";

/** What the Harness hears from its store: a warning at open, a failing spell and its end. */
export interface HarnessStoreOptions extends WriteQueueEvents {
  warn?(message: string, fields: Record<string, unknown>): void;
}

/**
 * Opens the Harness store (issue 27, ADR-0175): `<dir>/harness.sqlite`, made with its directory
 * when missing (file mode 600, directory 700), WAL and `synchronous=NORMAL`, checked
 * (`PRAGMA quick_check`), migrated; `dir` `:memory:` keeps it in memory (tests, a library user;
 * lost with the process). An existing 0-byte file opens as an empty store with a warning.
 * Writes that fail to commit stay queued and are retried (ADR-0177): `opts.onFailing` hears the
 * first failure, `opts.onRecovered` the commit that ended it.
 * @throws Error naming the path and the fix when the file cannot be opened, is damaged, or is
 *   from a newer Harness.
 * @see docs/adr/0175-harness-durable-state.md, docs/adr/0177-harness-store-failing.md
 */
export function openHarnessStore(dir: string, opts: HarnessStoreOptions = {}): HarnessStore {
  const path = dir === ":memory:" ? ":memory:" : join(dir, HARNESS_STORE_FILE);
  let db: Database.Database;
  try {
    if (dir !== ":memory:") {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
      else if (statSync(path).size === 0)
        opts.warn?.(
          `the Harness store at ${path} was an empty (0-byte) file: starting with no conversations; if it held state, restore it from a backup`,
          { path },
        );
    }
    db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    checkIntact(db, path);
    migrateHarnessStore(db, path);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(
      `cannot use the Harness store at ${path}: ${why} (JR2_HARNESS_DATA_DIR; if the file is damaged, move it aside to start empty or restore it from a backup)`,
      { cause: err },
    );
  }
  return sqliteHarnessStore(db, path, opts);
}

/** Smashed pages open fine and fail later with no path: find them at start instead. */
function checkIntact(db: Database.Database, path: string): void {
  if (path === ":memory:") return;
  const verdict = db.pragma("quick_check", { simple: true });
  if (verdict !== "ok") throw new Error(`the file is damaged (quick_check: ${String(verdict)})`);
}

function sqliteHarnessStore(db: Database.Database, path: string, opts: HarnessStoreOptions): HarnessStore {
  const q = {
    create: db.prepare("INSERT OR IGNORE INTO conversations (iid, seat, touched_at) VALUES (?, NULL, ?)"),
    touch: db.prepare("UPDATE conversations SET touched_at = ? WHERE iid = ?"),
    seat: db.prepare("UPDATE conversations SET seat = ? WHERE iid = ?"),
    event: db.prepare("INSERT OR REPLACE INTO stream_events (iid, position, json) VALUES (?, ?, ?)"),
    admit: db.prepare(
      "INSERT OR IGNORE INTO submissions (iid, submission_id, admitted, settled) VALUES (?, ?, ?, 0)",
    ),
    settle: db.prepare("UPDATE submissions SET settled = 1 WHERE iid = ? AND submission_id = ?"),
    lastHash: db.prepare("SELECT sha256 FROM messages WHERE iid = ? AND position = ?"),
    message: db.prepare(
      "INSERT OR REPLACE INTO messages (iid, position, submission_id, json, sha256) VALUES (?, ?, ?, ?, ?)",
    ),
    trimMessages: db.prepare("DELETE FROM messages WHERE iid = ? AND position >= ?"),
    conversation: db.prepare("SELECT seat FROM conversations WHERE iid = ?"),
    events: db.prepare("SELECT json FROM stream_events WHERE iid = ? ORDER BY position"),
    messages: db.prepare(
      "SELECT submission_id AS submissionId, json, sha256 FROM messages WHERE iid = ? ORDER BY position",
    ),
    unsettled: db.prepare(
      "SELECT iid, submission_id AS submissionId FROM submissions WHERE settled = 0 ORDER BY iid, admitted, rowid",
    ),
    untouched: db.prepare("SELECT iid FROM conversations WHERE touched_at < ?"),
    getRecord: db.prepare("SELECT json FROM harness_records WHERE kind = ? AND key = ?"),
    putRecord: db.prepare("INSERT OR REPLACE INTO harness_records (kind, key, json) VALUES (?, ?, ?)"),
    deleteRecord: db.prepare("DELETE FROM harness_records WHERE kind = ? AND key = ?"),
    listRecords: db.prepare("SELECT key, json FROM harness_records WHERE kind = ? ORDER BY key"),
  };
  const forget = ["conversations", "stream_events", "submissions", "messages"].map((t) =>
    db.prepare(`DELETE FROM ${t} WHERE iid = ?`),
  );

  const commit = db.transaction((ops: Array<() => void>) => {
    for (const op of ops) op();
  });
  const writes = createWriteQueue(commit, () => db.open, opts);
  const { flush } = writes;
  const enqueue = writes.enqueue;

  return {
    path,
    load(iid) {
      flush();
      const row = q.conversation.get(iid) as { seat: string | null } | undefined;
      if (!row) return undefined;
      // Served as stored, byte for byte: an event a newer Harness wrote keeps its place.
      const events = (q.events.all(iid) as Array<{ json: string }>).map(
        (r) => JSON.parse(r.json) as StreamEvent,
      );
      const rows = q.messages.all(iid) as Array<{ submissionId: string; json: string; sha256: string }>;
      let hash = HISTORY_SHA256_START;
      for (const [i, r] of rows.entries()) {
        hash = chainHash(hash, r.json);
        if (hash !== r.sha256)
          throw new Error(
            `the Harness store at ${path}: conversation \`${iid}\` message ${i} does not match its sha256 (the file was changed outside the Harness)`,
          );
      }
      const stored: StoredConversation = {
        iid,
        seat: row.seat === null ? undefined : JSON.parse(row.seat),
        events,
        messages: rows.map(({ submissionId, json }) => ({ submissionId, json })),
      };
      return stored;
    },
    create: (iid, at) => enqueue(() => q.create.run(iid, at)),
    touch: (iid, at) => enqueue(() => q.touch.run(at, iid)),
    appendEvent: (iid, position, event) => enqueue(() => q.event.run(iid, position, JSON.stringify(event))),
    admit: (iid, submissionId, at) => enqueue(() => q.admit.run(iid, submissionId, at)),
    settle: (iid, submissionId) => enqueue(() => q.settle.run(iid, submissionId)),
    putSeat: (iid, seat) => enqueue(() => q.seat.run(JSON.stringify(seat), iid)),
    appendMessages(iid, submissionId, position, json) {
      const texts = [...json];
      enqueue(() => {
        q.trimMessages.run(iid, position);
        const before = position === 0 ? undefined : (q.lastHash.get(iid, position - 1) as { sha256: string });
        let hash = before?.sha256 ?? HISTORY_SHA256_START;
        for (const [i, text] of texts.entries()) {
          hash = chainHash(hash, text);
          q.message.run(iid, position + i, submissionId, text, hash);
        }
      });
    },
    history(iid) {
      flush();
      if (!q.conversation.get(iid)) return undefined;
      return historyOfRows(q.messages.all(iid) as Array<{ submissionId: string; json: string }>);
    },
    unsettled() {
      flush();
      return q.unsettled.all() as Array<{ iid: string; submissionId: string }>;
    },
    forgetUntouchedSince(before) {
      flush();
      const iids = (q.untouched.all(before) as Array<{ iid: string }>).map((r) => r.iid);
      db.transaction(() => {
        for (const iid of iids) for (const stmt of forget) stmt.run(iid);
      })();
      return iids;
    },
    getRecord(kind, key) {
      flush();
      const row = q.getRecord.get(kind, key) as { json: string } | undefined;
      return row === undefined ? undefined : JSON.parse(row.json);
    },
    putRecord: (kind, key, value) => enqueue(() => q.putRecord.run(kind, key, JSON.stringify(value))),
    deleteRecord: (kind, key) => enqueue(() => q.deleteRecord.run(kind, key)),
    listRecords(kind): HarnessRecord[] {
      flush();
      return (q.listRecords.all(kind) as Array<{ key: string; json: string }>).map((r) => ({
        key: r.key,
        value: JSON.parse(r.json),
      }));
    },
    flush,
    failing: writes.failing,
    close() {
      if (!db.open) return;
      writes.stop();
      try {
        flush();
      } finally {
        db.close();
      }
    },
  };
}
