import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createMemoryStore, type RunBlob, type RunStore } from "../../src/durability/store/run-store.js";
import { openSqliteStore, STORE_FILE } from "../../src/durability/store/sqlite.js";
import { reviewBlob } from "./review-blob.js";
import { sqliteDir } from "./store-fixture.js";

const tempDir = () => sqliteDir("jr2-store-");

/** The review run with its coder's admission ledgered. */
function blob(runId: string, patch: Partial<RunBlob> = {}): RunBlob {
  return reviewBlob(runId, {
    ledger: { [`${runId}/coder`]: { turnId: "t1", submissionId: "s1", offset: "3", streamUrl: "/x" } },
    ...patch,
  });
}

const answer = { delivered: true, moved: true, turnComplete: true, allowed: [] };

describe.each([
  ["sqlite", () => openSqliteStore(tempDir())],
  ["memory", () => createMemoryStore()],
] as const)("the %s run store (§8)", (_name, open: () => RunStore) => {
  it("saves a RunBlob with its pick answers and reads both back", async () => {
    const store = open();
    await store.save(blob("r1"), [
      { iid: "r1/coder", turnId: "t1", toolCallId: "call_1", scope: "instance", answer },
    ]);
    expect(await store.load("r1")).toEqual(blob("r1"));
    const stored = { iid: "r1/coder", turnId: "t1", toolCallId: "call_1", scope: "instance", answer };
    expect(await store.pickAnswer("r1", { iid: "r1/coder", turnId: "t1", toolCallId: "call_1" })).toEqual(
      stored,
    );
    expect(await store.pickAnswer("r1", { iid: "r1/coder", toolCallId: "call_1" })).toEqual(stored);
    expect(await store.pickAnswer("r1", { iid: "r1/coder", toolCallId: "call_2" })).toBeUndefined();
    await store.close();
  });

  it("lists runs by status and returns only running ones as live", async () => {
    const store = open();
    await store.save(blob("r1"));
    await store.save(blob("r2", { status: "done", updatedAt: "2026-11-30T01:00:00.000Z" }));
    expect((await store.live()).map((b) => b.runId)).toEqual(["r1"]);
    expect((await store.list({ status: "done" })).map((b) => b.runId)).toEqual(["r2"]);
    expect(await store.list()).toHaveLength(2);
    await store.close();
  });

  it("keeps the first answer of a tool-call id: a repeat never overwrites it", async () => {
    const store = open();
    await store.save(blob("r1"), [{ iid: "i", turnId: "t1", toolCallId: "c", scope: "sb-1", answer }]);
    await store.save(blob("r1"), [
      { iid: "i", turnId: "t1", toolCallId: "c", scope: "sb-1", answer: { ...answer, moved: false } },
    ]);
    const key = { iid: "i", turnId: "t1", toolCallId: "c" };
    expect((await store.pickAnswer("r1", key))?.answer).toEqual(answer);
    expect((await store.pickAnswer("r1", key))?.scope).toBe("sb-1");
    await store.close();
  });

  it("keeps one answer per Turn of a continued conversation: a reused tool-call id is another pick (ADR-0252)", async () => {
    const store = open();
    const later = { delivered: true, moved: true, turnComplete: false, allowed: ["finish"] };
    await store.save(blob("r1"), [{ iid: "i", turnId: "t1", toolCallId: "call_0", scope: "sb", answer }]);
    await store.save(blob("r1"), [
      { iid: "i", turnId: "t2", toolCallId: "call_0", scope: "sb", answer: later },
    ]);
    expect((await store.pickAnswer("r1", { iid: "i", turnId: "t1", toolCallId: "call_0" }))?.answer).toEqual(
      answer,
    );
    expect((await store.pickAnswer("r1", { iid: "i", turnId: "t2", toolCallId: "call_0" }))?.answer).toEqual(
      later,
    );
    expect(await store.pickAnswer("r1", { iid: "i", turnId: "t3", toolCallId: "call_0" })).toBeUndefined();
    // Without a turnId (an older Harness): the newest answer of any Turn.
    expect(await store.pickAnswer("r1", { iid: "i", toolCallId: "call_0" })).toMatchObject({
      turnId: "t2",
      answer: later,
    });
    expect(await store.pickAnswer("r2", { iid: "i", toolCallId: "call_0" })).toBeUndefined();
    await store.close();
  });

  it("stores the answer of a Turn without turnId under no Turn", async () => {
    const store = open();
    await store.save(blob("r1"), [{ iid: "i", turnId: null, toolCallId: "c", scope: "instance", answer }]);
    expect(await store.pickAnswer("r1", { iid: "i", toolCallId: "c" })).toMatchObject({
      turnId: null,
      answer,
    });
    expect(await store.pickAnswer("r1", { iid: "i", turnId: "t1", toolCallId: "c" })).toBeUndefined();
    await store.close();
  });
});

describe("the SQLite store on disk", () => {
  it("survives a reopen: settled and live runs and pick answers stay readable", async () => {
    const dir = tempDir();
    const first = openSqliteStore(dir);
    await first.save(blob("r1", { status: "done" }), [
      { iid: "i", turnId: "t1", toolCallId: "c", scope: "sb", answer },
    ]);
    await first.close();
    const second = openSqliteStore(dir);
    expect((await second.load("r1"))?.status).toBe("done");
    expect(await second.pickAnswer("r1", { iid: "i", turnId: "t1", toolCallId: "c" })).toMatchObject({
      scope: "sb",
      answer,
    });
    await second.close();
  });

  it("uses WAL and records its schema version", async () => {
    const dir = tempDir();
    await openSqliteStore(dir).close();
    const db = new Database(join(dir, STORE_FILE));
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.prepare("SELECT MAX(version) v FROM schema_migrations").get()).toEqual({ v: 11 });
    db.close();
  });

  it("migrates a version-1 store in place: its pick answers get the instance scope and no Turn", async () => {
    const dir = tempDir();
    const db = new Database(join(dir, STORE_FILE));
    db.exec(
      "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);" +
        "CREATE TABLE runs (run_id TEXT PRIMARY KEY, workflow TEXT NOT NULL, status TEXT NOT NULL, updated_at TEXT NOT NULL, blob TEXT NOT NULL);" +
        "CREATE TABLE pick_answers (run_id TEXT NOT NULL, iid TEXT NOT NULL, tool_call_id TEXT NOT NULL, answer TEXT NOT NULL, PRIMARY KEY (run_id, iid, tool_call_id));" +
        "INSERT INTO schema_migrations VALUES (1, 'x');",
    );
    db.prepare("INSERT INTO pick_answers VALUES ('r1', 'i', 'c', ?)").run(JSON.stringify(answer));
    db.close();
    const store = openSqliteStore(dir);
    expect(await store.pickAnswer("r1", { iid: "i", toolCallId: "c" })).toEqual({
      iid: "i",
      turnId: null,
      toolCallId: "c",
      scope: "instance",
      answer,
    });
    await store.close();
  });

  it("migrates a version-2 store in place: its answers keep their scope, and a second Turn may reuse a tool-call id", async () => {
    const dir = tempDir();
    const db = new Database(join(dir, STORE_FILE));
    db.exec(
      "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);" +
        "CREATE TABLE runs (run_id TEXT PRIMARY KEY, workflow TEXT NOT NULL, status TEXT NOT NULL, updated_at TEXT NOT NULL, blob TEXT NOT NULL);" +
        "CREATE TABLE pick_answers (run_id TEXT NOT NULL, iid TEXT NOT NULL, tool_call_id TEXT NOT NULL, answer TEXT NOT NULL, PRIMARY KEY (run_id, iid, tool_call_id));" +
        "ALTER TABLE pick_answers ADD COLUMN scope TEXT NOT NULL DEFAULT 'instance';" +
        "INSERT INTO schema_migrations VALUES (1, 'x'), (2, 'x');",
    );
    db.prepare("INSERT INTO pick_answers VALUES ('r1', 'i', 'call_0', ?, 'sb-1')").run(
      JSON.stringify(answer),
    );
    db.close();
    const store = openSqliteStore(dir);
    expect(await store.pickAnswer("r1", { iid: "i", toolCallId: "call_0" })).toMatchObject({
      turnId: null,
      scope: "sb-1",
      answer,
    });
    const next = { ...answer, turnComplete: false, allowed: ["finish"] };
    await store.save(blob("r1"), [
      { iid: "i", turnId: "t2", toolCallId: "call_0", scope: "sb-1", answer: next },
    ]);
    expect((await store.pickAnswer("r1", { iid: "i", turnId: "t2", toolCallId: "call_0" }))?.answer).toEqual(
      next,
    );
    await store.close();
  });

  it("refuses a store from a newer jr2, naming the path and versions", async () => {
    const dir = tempDir();
    await openSqliteStore(dir).close();
    const db = new Database(join(dir, STORE_FILE));
    db.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (99, 'x')").run();
    db.close();
    expect(() => openSqliteStore(dir)).toThrow(/schema version 99, newer than this jr2 knows \(11\)/);
  });
});
