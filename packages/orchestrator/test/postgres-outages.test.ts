/**
 * The PostgreSQL store when its database is paused, killed and restarted (issue 15, ADR-0280):
 * a save while it is paused rejects by its timeout, a commit whose answer never came, saves in
 * flight when it is killed, notices after an outage, and a close while the LISTEN connection is
 * reconnecting. The suite starts and kills its own throwaway cluster (`scripts/pg-test-cluster.sh`,
 * run when JR2_TEST_PG_URL says PostgreSQL is here).
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { FencedError } from "../src/durability/store/ownership.js";
import {
  openPostgresStore,
  type PostgresRunStore,
  type PostgresStoreOptions,
} from "../src/durability/store/postgres.js";
import { describePg } from "./pg.js";
import { Cluster, commitCuttingProxy } from "./pg-outages.js";
import { blob, event, eventually, notifiedSeqs, outcome, sleep } from "./pg-store-fixture.js";

describePg("the PostgreSQL store when its database is paused, killed and restarted", () => {
  const cluster = new Cluster();
  let url = "";
  const open: PostgresRunStore[] = [];
  const lines: string[] = [];
  const log = {
    warn: (obj: unknown, msg?: string) => lines.push(JSON.stringify([obj, msg])),
    info: (obj: unknown, msg?: string) => lines.push(JSON.stringify([obj, msg])),
  };
  const instance = async (id: string, options: Partial<PostgresStoreOptions> = {}, at = url) => {
    const store = await openPostgresStore(at, {
      instanceId: id,
      advertiseUrl: `http://127.0.0.1:1${id.length}`,
      leaseMs: 1_000,
      statementTimeoutMs: 1_500,
      poolMax: 4,
      log: log as unknown as PostgresStoreOptions["log"],
      ...options,
    });
    open.push(store);
    return store;
  };
  const sessions = async (app: string) => {
    const c = new pg.Client(url);
    await c.connect();
    try {
      const { rows } = await c.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1",
        [app],
      );
      return Number(rows[0]!.n);
    } finally {
      await c.end();
    }
  };

  beforeAll(() => {
    cluster.start();
    const u = new URL(cluster.url);
    u.pathname = "/postgres";
    url = u.toString();
  }, 60_000);
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });
  afterAll(() => cluster.stop());

  it("a save while the database is paused rejects by its timeout (never hangs, never succeeds); saves work once it is back, leaking no client", async () => {
    const a = await instance("A");
    await a.save(blob("p-1"));
    cluster.signal("SIGSTOP");
    let paused = true;
    try {
      const saves = [
        a.save(blob("p-1", { updatedAt: "2026-11-30T00:00:01.000Z" })),
        a.save(blob("p-2")),
        a.appendEvents("p-1", [event(1)]),
      ];
      const results = await Promise.all(saves.map((s) => outcome(s, 12_000)));
      expect(results).toEqual(["rejected", "rejected", "rejected"]);
      cluster.signal("SIGCONT");
      paused = false;
      await a.save(blob("p-1", { updatedAt: "2026-11-30T00:00:02.000Z" }));
      await a.save(blob("p-2"));
      expect((await a.load("p-1"))?.updatedAt).toBe("2026-11-30T00:00:02.000Z");
      expect(a.pool.totalCount).toBeLessThanOrEqual(4);
      await eventually(async () => (await sessions("jr2")) <= 4);
    } finally {
      if (paused) cluster.signal("SIGCONT");
    }
  }, 30_000);

  it("a claim whose COMMIT reached the database but whose answer was lost does not fence its own run", async () => {
    const cut = await commitCuttingProxy(new URL(url));
    try {
      const a = await instance("A", {}, cut.url);
      cut.armed = true;
      expect(await outcome(a.save(blob("c-1")), 12_000)).toBe("rejected");
      // The database committed the claim; A never heard so.
      await eventually(async () => (await a.ownership.holder("c-1"))?.instanceId === "A");
      expect(a.ownership.holds("c-1")).toBe(false);
      await a.save(blob("c-1", { updatedAt: "2026-11-30T00:00:01.000Z" }));
      expect(a.ownership.holds("c-1")).toBe(true);
      expect((await a.ownership.holder("c-1"))?.epoch).toBe(2);
      expect((await a.load("c-1"))?.updatedAt).toBe("2026-11-30T00:00:01.000Z");
      // An expired row of its own is adoption's, not a claim's.
      cut.armed = true;
      expect(await outcome(a.save(blob("c-2")), 12_000)).toBe("rejected");
      await eventually(async () => (await a.ownership.holder("c-2"))?.instanceId === "A");
      await sleep(1_100);
      await expect(a.save(blob("c-2"))).rejects.toThrow(FencedError);
    } finally {
      for (const s of open.splice(0)) await s.close();
      cut.close();
    }
  }, 30_000);

  it("the database killed (immediate) under saves and restarted: every save settles, later saves work, the LISTEN client is back and a reader misses no event", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const seen = await notifiedSeqs(a, b, "k-1");
    const inFlight = Array.from({ length: 12 }, (_, i) =>
      a.save(blob(`k-${(i % 4) + 1}`, { updatedAt: `2026-11-30T00:00:0${i % 10}.000Z` })),
    );
    cluster.killNow();
    const results = await Promise.all(inFlight.map((s) => outcome(s, 15_000)));
    expect(results).not.toContain("hung");
    cluster.restart();
    // Written before B's LISTEN connection is back: B hears of it by the catch-up.
    await eventually(async () => {
      await a.appendEvents("k-1", [event(1)]);
      return true;
    }, 15_000);
    await eventually(() => seen.includes(1), 15_000);
    await a.save(blob("k-1", { updatedAt: "2026-11-30T00:01:00.000Z" }), [], [], [event(2)]);
    await eventually(() => seen.includes(2), 5_000);
    expect(a.pool.totalCount).toBeLessThanOrEqual(4);
    expect(await sessions("jr2-notices")).toBe(2);
    expect(lines.some((l) => l.includes("LISTEN connection back"))).toBe(true);
  }, 60_000);

  it("after the whole database was paused past every timeout, notices reach a reader again", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const seen = await notifiedSeqs(a, b, "s-1");
    cluster.signal("SIGSTOP");
    try {
      expect(await outcome(a.appendEvents("s-1", [event(1)]), 12_000)).toBe("rejected");
    } finally {
      cluster.signal("SIGCONT");
    }
    await a.appendEvents("s-1", [event(2)]);
    await eventually(() => seen.includes(2), 10_000);
    expect(await a.events("s-1", 0, 10)).toEqual([event(0), event(2)]);
  }, 30_000);

  it("closing the store while its LISTEN connection is reconnecting leaves no connection behind", async () => {
    const a = await instance("A");
    const admin = new pg.Client(url);
    await admin.connect();
    try {
      const postmaster = cluster.pids()[0]!;
      cluster.signal("SIGSTOP", [postmaster]); // new connections hang; open sessions still answer
      try {
        await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'jr2-notices'",
        );
        await sleep(600); // the drop is seen; the reconnect is waiting on the paused postmaster
        await a.close();
      } finally {
        cluster.signal("SIGCONT", [postmaster]);
      }
      await sleep(1_500);
      const { rows } = await admin.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'jr2-notices'",
      );
      expect(Number(rows[0]!.n)).toBe(0);
    } finally {
      await admin.end();
    }
  }, 30_000);
});
