/**
 * The PostgreSQL store's notices (ADR-0280): `(runId, seq)` of committed events told to
 * subscribers on every instance, never event data; a dropped LISTEN connection reopened with no
 * notice lost; thousands of subscribe/unsubscribe leaving no subscriber behind. Needs the test
 * cluster (JR2_TEST_PG_URL).
 */
import pg from "pg";
import { expect, it } from "vitest";
import { FencedError } from "../src/durability/store/ownership.js";
import { describePg } from "./pg.js";
import { pgInstances } from "./pg-instances.js";
import { blob, event, eventually, LEASE_MS, notifiedSeqs, sleep } from "./pg-store-fixture.js";

describePg("the PostgreSQL store's notices across instances (ADR-0280)", () => {
  const pgs = pgInstances("jr2_notices", LEASE_MS);
  const { lines, runId } = pgs;
  const instance = pgs.instance.bind(pgs);

  it("tells (runId, seq) of committed events to subscribers on every instance, never event data", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = `${runId()} with space`;
    const raw = new pg.Client(pgs.db.url);
    await raw.connect();
    const payloads: string[] = [];
    raw.on("notification", (m) => payloads.push(m.payload ?? ""));
    await raw.query("LISTEN jr2_events");
    try {
      const seen: number[] = [];
      const stop = b.notices.subscribe(id, (seq) => seen.push(seq));
      await a.save(blob(id), [], [], [event(0, "SECRET-1"), event(1, "SECRET-1")]);
      await a.appendEvents(id, [event(2, "SECRET-2")]);
      await eventually(() => seen.includes(2));
      expect(seen).toEqual([1, 2]);
      await eventually(() => payloads.length >= 2);
      expect(payloads).toEqual([`${id} 1`, `${id} 2`]);
      expect(payloads.join()).not.toContain("SECRET");
      // A failed save notifies nothing (the notice goes at commit).
      await expect(b.appendEvents(id, [event(3)])).rejects.toThrow(FencedError);
      stop();
      await a.appendEvents(id, [event(4)]);
      await eventually(() => payloads.length >= 3);
      expect(payloads[2]).toBe(`${id} 4`);
      expect(seen).toEqual([1, 2]);
    } finally {
      await raw.end();
    }
  });

  it("reopens a dropped LISTEN connection and tells each subscriber the newest seq (no notice lost)", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    const seen = await notifiedSeqs(a, b, id);
    await a.pool.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'jr2-notices' AND datname = current_database()",
    );
    await a.appendEvents(id, [event(1), event(2)]); // likely while both listeners are down
    await eventually(() => seen.includes(2), 10_000);
    expect(lines.some((l) => l.includes("LISTEN connection dropped"))).toBe(true);
    await a.appendEvents(id, [event(3)]);
    await eventually(() => seen.includes(3));
  });

  it("thousands of subscribe/unsubscribe leave no subscriber behind; a repeated unsubscribe removes nothing else", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    let stale = 0;
    for (let i = 0; i < 5_000; i++) {
      const off = b.notices.subscribe(i % 2 === 0 ? id : `${id}-${i}`, () => stale++);
      off();
      off();
    }
    const seen: number[] = [];
    const keep = b.notices.subscribe(id, (seq) => seen.push(seq));
    const offAgain = b.notices.subscribe(id, () => stale++);
    offAgain();
    offAgain();
    await a.save(blob(id), [], [], [event(0)]);
    await eventually(() => seen.includes(0));
    await sleep(100);
    expect(stale).toBe(0);
    keep();
  });
});
