/**
 * The byte-exact conversation history in every store (issue 27, ADR-0176): each part stored
 * once by (run, iid, sha256) in arrival order and read back byte for byte (also across a
 * reopen); a fresh conversation's drop deletes only its iid, after the parts written before it;
 * a save of the settled run deletes the run's history and later parts are not stored;
 * retention deletes what a settled run still holds — memory, SQLite and PostgreSQL alike. On
 * PostgreSQL, history writes are aside (ADR-0176): one stuck in the database holds up none of
 * the run's saves or events, and an instance without the run's lease stores none.
 */
import { createHash } from "node:crypto";
import type { HistorySubmission } from "@jr2/wire";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/durability/store/postgres.js";
import { createMemoryStore, type RunStore } from "../../src/durability/store/run-store.js";
import { openSqliteStore } from "../../src/durability/store/sqlite.js";
import { describePg, freshPgDatabase } from "../pg.js";
import { blob, sqliteDir } from "./store-fixture.js";

/** Parts chained as the Harness chains them: sha256(previous hex ‖ "\n" ‖ text). */
function chain(texts: readonly string[]): HistorySubmission[] {
  let previous = createHash("sha256").update("").digest("hex");
  return texts.map((messages, i) => {
    previous = createHash("sha256").update(`${previous}\n${messages}`).digest("hex");
    return { submissionId: `s${i + 1}`, messages, sha256: previous };
  });
}

// Bytes a re-serialization would change: key order, spacing, escapes, astral characters.
const TEXTS = [
  '[{"role":"user","content":"Review  the patch.\\u2028"}]',
  '[{"content":"ok 👍 \\u0000","role":"assistant"} ]',
  '[{"role":"user","content":"\\"again\\"\\n"}]',
];

/** Retries `check` every 20 ms for up to 10 s (its last failure thrown). */
async function eventually(check: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

function contract(open: () => Promise<RunStore>, reopen?: () => Promise<RunStore>) {
  it("keeps each part once, byte for byte, in arrival order; a drop deletes only its iid", async () => {
    const store = await open();
    const history = store.conversationHistory!;
    const [a, b, c] = chain(TEXTS);
    await store.save(blob("r1", "running"));
    await history.writeHistory("r1", [
      { iid: "r1/coder", part: a! },
      { iid: "r1/fresh", part: c! },
    ]);
    // A stream read again after a restore: the same part adds nothing.
    await history.writeHistory("r1", [
      { iid: "r1/coder", part: a! },
      { iid: "r1/coder", part: b! },
    ]);
    expect(await history.histories("r1")).toEqual([
      { iid: "r1/coder", part: a },
      { iid: "r1/fresh", part: c },
      { iid: "r1/coder", part: b },
    ]);
    // Parts queued before a drop are written first, then dropped with it.
    await history.writeHistory("r1", [
      { iid: "r1/fresh", part: a! },
      { iid: "r1/fresh", drop: true },
    ]);
    expect(await history.histories("r1")).toEqual([
      { iid: "r1/coder", part: a },
      { iid: "r1/coder", part: b },
    ]);
    expect(await history.histories("other")).toEqual([]);
    await store.close();
    if (!reopen) return;
    const again = await reopen();
    const parts = await again.conversationHistory!.histories("r1");
    expect(parts.map((p) => p.part.messages)).toEqual([TEXTS[0], TEXTS[1]]);
    expect(parts.map((p) => p.part.sha256)).toEqual([a!.sha256, b!.sha256]);
    await again.close();
  });

  it("deletes a run's history when it settles, stores none after, and retention takes the rest", async () => {
    const store = await open();
    const history = store.conversationHistory!;
    const [a, b] = chain(TEXTS);
    await store.save(blob("r2", "running"));
    await store.save(blob("r3", "running"));
    await history.writeHistory("r2", [{ iid: "r2/coder", part: a! }]);
    await history.writeHistory("r3", [{ iid: "r3/coder", part: a! }]);
    await store.save(blob("r2", "done", "2026-01-02T00:00:00.000Z"));
    // PostgreSQL deletes it just after the settling commit, aside from the run's writes.
    await eventually(async () => expect(await history.histories("r2")).toEqual([]));
    // A part still in flight when the run settled is not stored (no live run admits it again).
    await history.writeHistory("r2", [{ iid: "r2/coder", part: b! }]).catch(() => {});
    expect(await history.histories("r2")).toEqual([]);
    // The other run keeps its own; a drifted run keeps its (a resume admits it again).
    expect(await history.histories("r3")).toEqual([{ iid: "r3/coder", part: a }]);
    await store.save(blob("r3", "drifted", "2026-01-02T00:00:00.000Z"));
    expect(await history.histories("r3")).toEqual([{ iid: "r3/coder", part: a }]);
    await store.pruneEvents("2026-03-01T00:00:00.000Z");
    expect(await history.histories("r3")).toHaveLength(1);
    await store.close();
  });
}

describe("the memory store's conversation histories", () => {
  contract(async () => createMemoryStore());
});

describe("the SQLite store's conversation histories (migration 11)", () => {
  let dir = "";
  contract(
    async () => {
      dir = sqliteDir("jr2-histories-");
      return openSqliteStore(dir);
    },
    async () => openSqliteStore(dir),
  );

  it("retention deletes the history a settled run still holds", async () => {
    const store = openSqliteStore(sqliteDir("jr2-histories-"));
    const [a] = chain(TEXTS);
    await store.save(blob("r4", "running"));
    await store.conversationHistory!.writeHistory("r4", [{ iid: "r4/coder", part: a! }]);
    // A row a settled save did not delete (written by an older jr2 before it settled the run).
    store.db.prepare("UPDATE runs SET status = 'done' WHERE run_id = 'r4'").run();
    expect(await store.conversationHistory!.histories("r4")).toHaveLength(1);
    await store.pruneEvents("2026-03-01T00:00:00.000Z");
    expect(await store.conversationHistory!.histories("r4")).toEqual([]);
    await store.close();
  });
});

describePg("the PostgreSQL store's conversation histories", () => {
  let db: Awaited<ReturnType<typeof freshPgDatabase>>;
  beforeAll(async () => {
    db = await freshPgDatabase("jr2_histories");
  });
  afterAll(async () => {
    await db?.drop();
  });
  const open = (instanceId: string) =>
    openPostgresStore(db.url, { instanceId, advertiseUrl: "http://127.0.0.1:1", poolMax: 3 });
  contract(
    () => open("a"),
    () => open("b"),
  );

  it("a history write stuck in the database holds up none of the run's saves or events (aside)", async () => {
    const store = await open("a");
    const [a] = chain(TEXTS);
    await store.save(blob("r5", "running"));
    // Another session holds the history table: the history write waits for it.
    const blocker = new pg.Client(db.url);
    await blocker.connect();
    await blocker.query("BEGIN; LOCK TABLE conversation_history IN ACCESS EXCLUSIVE MODE");
    let historyDone = false;
    const stuck = store
      .conversationHistory!.writeHistory("r5", [{ iid: "r5/coder", part: a! }])
      .then(() => (historyDone = true));
    const bound = new Promise<string>((r) => setTimeout(() => r("held up"), 15_000).unref());
    const writes = Promise.all([
      store.save(blob("r5", "running", "2026-01-01T00:00:01.000Z")),
      store.appendEvents("r5", [
        { type: "status", status: "running", value: "s1", seq: 1, at: "2026-01-01T00:00:01.000Z" },
      ]),
    ]).then(() => "committed");
    expect(await Promise.race([writes, bound])).toBe("committed");
    expect(historyDone).toBe(false);
    await blocker.query("COMMIT");
    await blocker.end();
    await stuck;
    expect(await store.conversationHistory!.histories("r5")).toEqual([{ iid: "r5/coder", part: a }]);
    await store.close();
  });

  it("an instance that does not hold the run's lease stores none of its history", async () => {
    const owner = await open("a");
    const other = await open("b");
    const [a] = chain(TEXTS);
    await owner.save(blob("r6", "running"));
    await other.conversationHistory!.writeHistory("r6", [{ iid: "r6/coder", part: a! }]);
    expect(await owner.conversationHistory!.histories("r6")).toEqual([]);
    await owner.conversationHistory!.writeHistory("r6", [{ iid: "r6/coder", part: a! }]);
    expect(await other.conversationHistory!.histories("r6")).toEqual([{ iid: "r6/coder", part: a }]);
    await owner.close();
    await other.close();
  });
});
