/**
 * Run starts' idempotency keys in every store (issue 24 item 6, ADR-0282): a key reserved for a
 * run answers that run for 24 h (another key, or the same key a day later, is fresh); a failed
 * start's key is forgotten; on PostgreSQL two instances reserving one key at once agree on one run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/durability/store/postgres.js";
import { createMemoryStore, type RunStore } from "../../src/durability/store/run-store.js";
import { openSqliteStore } from "../../src/durability/store/sqlite.js";
import { START_KEY_WINDOW_MS } from "../../src/durability/store/start-keys.js";
import { describePg, freshPgDatabase } from "../pg.js";
import { sqliteDir } from "./store-fixture.js";

const T0 = Date.parse("2026-12-01T00:00:00.000Z");

function contract(open: () => Promise<RunStore>) {
  it("answers the first start's run for 24 h, then reserves anew; a forgotten key is fresh", async () => {
    const store = await open();
    const keys = store.startKeys!;
    expect(await keys.reserve("k1", "flow", "run-1", T0)).toEqual({
      runId: "run-1",
      workflow: "flow",
      fresh: true,
    });
    expect(await keys.reserve("k1", "flow", "run-2", T0 + 1000)).toEqual({
      runId: "run-1",
      workflow: "flow",
      fresh: false,
    });
    expect(await keys.reserve("k1", "other", "run-3", T0 + START_KEY_WINDOW_MS - 1)).toMatchObject({
      runId: "run-1",
      workflow: "flow",
      fresh: false,
    });
    expect((await keys.reserve("k2", "flow", "run-4", T0)).fresh).toBe(true);
    expect(await keys.reserve("k1", "flow", "run-5", T0 + START_KEY_WINDOW_MS)).toEqual({
      runId: "run-5",
      workflow: "flow",
      fresh: true,
    });
    await keys.forget("k1", "run-1"); // not its run any more: kept
    expect((await keys.reserve("k1", "flow", "run-6", T0 + START_KEY_WINDOW_MS)).runId).toBe("run-5");
    await keys.forget("k1", "run-5");
    expect((await keys.reserve("k1", "flow", "run-7", T0 + START_KEY_WINDOW_MS)).fresh).toBe(true);
    await store.close();
  });
}

describe("the memory store's start keys", () => {
  contract(async () => createMemoryStore());
});

describe("the SQLite store's start keys (migration 10)", () => {
  contract(async () => {
    return openSqliteStore(sqliteDir("jr2-start-keys-"));
  });
});

describePg("the PostgreSQL store's start keys", () => {
  let db: Awaited<ReturnType<typeof freshPgDatabase>>;
  beforeAll(async () => {
    db = await freshPgDatabase("jr2_start_keys");
  });
  afterAll(async () => {
    await db?.drop();
  });
  const open = (instanceId: string) =>
    openPostgresStore(db.url, { instanceId, advertiseUrl: "http://127.0.0.1:1", poolMax: 3 });
  contract(() => open("a"));

  it("two instances reserving one key at once agree on one run", async () => {
    const a = await open("a");
    const b = await open("b");
    const [x, y] = await Promise.all([
      a.startKeys!.reserve("race", "flow", "run-a", T0),
      b.startKeys!.reserve("race", "flow", "run-b", T0),
    ]);
    expect([x.fresh, y.fresh].sort()).toEqual([false, true]);
    expect(x.runId).toBe(y.runId);
    await a.close();
    await b.close();
  });
});
