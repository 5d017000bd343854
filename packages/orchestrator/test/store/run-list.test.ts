/**
 * `RunStore.list` (ADR-0062): filtered by status, workflow and outcome, newest first
 * (`updatedAt`, then `runId`), paged by `limit` and `after` — the same for the memory and the
 * SQLite store; the outcome and the settled state value are stored with the run.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createMemoryStore, type RunBlob, type RunStore } from "../../src/durability/store/run-store.js";
import { openSqliteStore, STORE_FILE } from "../../src/durability/store/sqlite.js";
import { sumUsage } from "../../src/durability/usage-totals.js";
import { sqliteDir } from "./store-fixture.js";

const tempDir = () => sqliteDir("jr2-list-");

const blobOf = (n: number, over: Partial<RunBlob> = {}): RunBlob => ({
  runId: `run-${String(n).padStart(2, "0")}`,
  workflow: n % 2 ? "review" : "triage",
  machineFingerprint: "fp",
  status: "done",
  snapshot: { value: n % 3 ? "done" : "failed" },
  input: {},
  ledger: {},
  epochs: {},
  timers: [],
  usage: sumUsage([]),
  outcome: n % 3 ? "succeeded" : "failed",
  createdAt: "2026-12-01T00:00:00.000Z",
  // Two runs per second: runs 2k and 2k+1 tie on updatedAt, ordered by runId.
  updatedAt: `2026-12-01T00:00:${String(Math.floor(n / 2)).padStart(2, "0")}.000Z`,
  ...over,
});

const stores: Array<[string, () => RunStore]> = [
  ["memory", () => createMemoryStore()],
  ["sqlite", () => openSqliteStore(tempDir())],
];

describe.each(stores)("the %s store lists runs", (_name, open) => {
  async function seeded(): Promise<RunStore> {
    const store = open();
    for (let n = 0; n < 10; n++) await store.save(blobOf(n));
    await store.save(blobOf(10, { status: "running", outcome: undefined, snapshot: { value: "working" } }));
    return store;
  }

  it("newest first, with outcome and final state of the settled ones", async () => {
    const store = await seeded();
    const all = await store.list();
    expect(all.map((r) => r.runId)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0].map((n) => blobOf(n).runId));
    expect(all[0]).toEqual({
      runId: "run-10",
      workflow: "triage",
      status: "running",
      updatedAt: blobOf(10).updatedAt,
    });
    expect(all[1]).toMatchObject({ runId: "run-09", outcome: "failed", finalState: "failed" });
    await store.close();
  });

  it("filters by status, workflow and outcome together", async () => {
    const store = await seeded();
    const listed = await store.list({ workflow: "review", outcome: "failed", status: "done" });
    expect(listed.map((r) => r.runId)).toEqual(["run-09", "run-03"]);
    expect(await store.list({ status: "running" })).toHaveLength(1);
    await store.close();
  });

  it("pages by limit and after, through ties on updatedAt, without a gap or a repeat", async () => {
    const store = await seeded();
    const seen: string[] = [];
    let after: { updatedAt: string; runId: string } | undefined;
    for (let page = 0; page < 10; page++) {
      const rows = await store.list({ limit: 3, ...(after ? { after } : {}) });
      seen.push(...rows.map((r) => r.runId));
      if (rows.length < 3) break;
      const last = rows.at(-1)!;
      after = { updatedAt: last.updatedAt, runId: last.runId };
    }
    expect(seen).toEqual((await store.list()).map((r) => r.runId));
    await store.close();
  });
});

describe("the SQLite store's outcome columns", () => {
  it("migration 5 gives an older faulted or cancelled run its status as outcome, and lists by index", async () => {
    const dir = tempDir();
    const store = openSqliteStore(dir);
    await store.save(blobOf(1, { status: "faulted", outcome: undefined }));
    await store.save(blobOf(2, { status: "done", outcome: undefined }));
    await store.close();
    // As a store before migration 5 left them: no outcome column values, no later tables.
    const db = new Database(join(dir, STORE_FILE));
    db.exec(
      "UPDATE runs SET outcome = NULL; DELETE FROM schema_migrations WHERE version >= 5; DROP TABLE run_events; DROP TABLE transcript_entries; DROP TABLE turns; ALTER TABLE usage_events DROP COLUMN turn_id; DROP TABLE run_versions; DROP TABLE run_start_keys; DROP TABLE conversation_history;",
    );
    db.exec("DROP INDEX runs_listed; DROP INDEX runs_status_listed; DROP INDEX runs_workflow_listed;");
    db.exec(
      "DROP INDEX runs_outcome_listed; ALTER TABLE runs DROP COLUMN outcome; ALTER TABLE runs DROP COLUMN final_state;",
    );
    db.close();
    const reopened = openSqliteStore(dir);
    expect((await reopened.list({ outcome: "faulted" })).map((r) => r.runId)).toEqual(["run-01"]);
    expect((await reopened.list({ status: "done" }))[0]?.outcome).toBeUndefined();
    const plan = reopened.db
      .prepare(
        "EXPLAIN QUERY PLAN SELECT run_id FROM runs WHERE workflow = 'x' ORDER BY updated_at DESC, run_id DESC LIMIT 5",
      )
      .all() as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail).join(" ")).toContain("runs_workflow_listed");
    await reopened.close();
  });
});
