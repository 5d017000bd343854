/**
 * The conditional save a drifted run's cancel and resume race on (issue 22 §3, ADR-0276), in
 * every store: `save(…, { ifStatus })` writes only while the stored status is that one, else
 * throws RunStatusChangedError and writes nothing — no blob, no event, no version. On
 * PostgreSQL, two instances (two pools, two instance ids) saving the same drifted run at once:
 * exactly one commits, under the fence of ADR-0280.
 */
import type { RunFeedEvent } from "@jr2/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FencedError } from "../../src/durability/store/ownership.js";
import { openPostgresStore } from "../../src/durability/store/postgres.js";
import {
  createMemoryStore,
  type RunBlob,
  RunStatusChangedError,
  type RunStore,
} from "../../src/durability/store/run-store.js";
import { openSqliteStore } from "../../src/durability/store/sqlite.js";
import { describePg, freshPgDatabase } from "../pg.js";
import { sqliteDir } from "./store-fixture.js";

const blob = (status: RunBlob["status"], updatedAt: string): RunBlob => ({
  runId: "r1",
  workflow: "w",
  machineFingerprint: "f",
  status,
  snapshot: { value: "waiting", context: {} },
  input: null,
  ledger: {},
  epochs: {},
  timers: [],
  usage: { promptTokens: 0, cachedTokens: 0, completionTokens: 0 },
  ...(status === "cancelled" ? { outcome: "cancelled" as const } : {}),
  createdAt: "2026-12-01T00:00:00.000Z",
  updatedAt,
});
const statusEvent = (seq: number, status: RunBlob["status"]): RunFeedEvent => ({
  seq,
  at: "2026-12-01T00:00:05.000Z",
  type: "status",
  status,
  value: "waiting",
});

/** The conditional save's contract on `open`'s store. */
function conditional(open: () => Promise<RunStore>) {
  it("writes while the status matches; otherwise throws and writes nothing (no blob, event or version)", async () => {
    const store = await open();
    await store.save(blob("drifted", "2026-12-01T00:00:01.000Z"));
    await store.save(
      blob("cancelled", "2026-12-01T00:00:02.000Z"),
      [],
      [],
      [statusEvent(0, "cancelled")],
      {
        kind: "cancel",
      },
      { ifStatus: "drifted" },
    );
    expect((await store.load("r1"))?.status).toBe("cancelled");
    const versions = (await store.versions("r1")).length;
    const refused = store.save(
      blob("running", "2026-12-01T00:00:03.000Z"),
      [],
      [],
      [statusEvent(1, "running")],
      {
        kind: "resume",
        by: "cli",
      },
      { ifStatus: "drifted" },
    );
    await expect(refused).rejects.toBeInstanceOf(RunStatusChangedError);
    await expect(refused).rejects.toMatchObject({ expected: "drifted", found: "cancelled" });
    expect((await store.load("r1"))?.status).toBe("cancelled");
    expect(await store.lastEventSeq("r1")).toBe(0);
    expect((await store.versions("r1")).length).toBe(versions);
    await expect(
      store.save(blob("cancelled", "2026-12-01T00:00:04.000Z"), [], [], [], undefined, {
        ifStatus: "drifted",
      }),
    ).rejects.toMatchObject({ found: "cancelled" });
    await store.close();
  });
}

describe("the memory store's conditional save (issue 22)", () => {
  conditional(async () => createMemoryStore());
});

describe("the SQLite store's conditional save (issue 22)", () => {
  conditional(async () => {
    return openSqliteStore(sqliteDir("jr2-conditional-"));
  });
});

describePg("the PostgreSQL store's conditional save (issue 22, ADR-0280)", () => {
  let db: Awaited<ReturnType<typeof freshPgDatabase>>;
  beforeAll(async () => {
    db = await freshPgDatabase("jr2_conditional");
  });
  afterAll(async () => {
    await db?.drop();
  });
  const open = async (instanceId: string) => {
    const store = await openPostgresStore(db.url, {
      instanceId,
      advertiseUrl: "http://127.0.0.1:1",
      poolMax: 3,
    });
    return store;
  };
  conditional(async () => {
    const store = await open("a");
    await store.pool.query("TRUNCATE runs, run_events, run_versions, run_leases");
    return store;
  });

  it("two instances closing and resuming one drifted run at once: exactly one commits", async () => {
    const a = await open("a");
    const b = await open("b");
    try {
      await a.pool.query("TRUNCATE runs, run_events, run_versions, run_leases");
      await a.save(blob("drifted", "2026-12-01T00:00:01.000Z"));
      const [cancel, resume] = await Promise.allSettled([
        a.save(
          blob("cancelled", "2026-12-01T00:00:02.000Z"),
          [],
          [],
          [statusEvent(0, "cancelled")],
          {
            kind: "cancel",
          },
          { ifStatus: "drifted" },
        ),
        b.save(
          blob("running", "2026-12-01T00:00:02.000Z"),
          [],
          [],
          [statusEvent(0, "running")],
          {
            kind: "resume",
            by: "cli",
          },
          { ifStatus: "drifted" },
        ),
      ]);
      const outcomes = [cancel.status, resume.status].sort();
      expect(outcomes).toEqual(["fulfilled", "rejected"]);
      const lost = [cancel, resume].find((r) => r.status === "rejected") as PromiseRejectedResult;
      // The cancel loses by the row's status, or — the resume's claim committed before its fence —
      // by the fence (another instance holds the run now): either way nothing of it is written.
      expect(lost.reason instanceof RunStatusChangedError || lost.reason instanceof FencedError).toBe(true);
      const won = cancel.status === "fulfilled" ? "cancelled" : "running";
      expect((await a.load("r1"))?.status).toBe(won);
      expect((await a.events("r1", 0, 10)).map((e) => (e as { status: string }).status)).toEqual([won]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
