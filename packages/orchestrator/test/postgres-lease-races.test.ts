/**
 * The PostgreSQL store's leases under contention (issue 15, ADR-0280): a write racing an
 * adoption commits before it or is fenced, never in between; two instances adopting at one
 * instant; a late write after the lease expired; release() while a save is queued; many saves
 * at once in call order, with no deadlock. Needs the test cluster (JR2_TEST_PG_URL).
 */
import pg from "pg";
import { expect, it } from "vitest";
import { FencedError } from "../src/durability/store/ownership.js";
import type { RunBlob } from "../src/durability/store/run-store.js";
import { describePg } from "./pg.js";
import { pgInstances } from "./pg-instances.js";
import { blob, event, LEASE_MS, outcome, sleep } from "./pg-store-fixture.js";

describePg("the PostgreSQL store's leases under contention (ADR-0280)", () => {
  const pgs = pgInstances("jr2_races", LEASE_MS);
  const { runId } = pgs;
  const instance = pgs.instance.bind(pgs);

  /**
   * A run `id` of A's whose lease expired, B to adopt it, and a write transaction of A's on it
   * paused after its fence (`writer`, a raw session: no idle timeout; the caller ends it).
   */
  async function expiredWithWriteUnderWay() {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id));
    await sleep(LEASE_MS + 100);
    const writer = new pg.Client(pgs.db.url);
    await writer.connect();
    try {
      await writer.query("BEGIN");
      const fence = await writer.query(
        "SELECT 1 FROM run_leases WHERE run_id = $1 AND owner_id = 'A' AND epoch = 1 FOR SHARE",
        [id],
      );
      expect(fence.rowCount).toBe(1);
      return { b, id, writer };
    } catch (error) {
      await writer.end();
      throw error;
    }
  }

  it("a write under way when an adoption runs commits first (the adoption waits for its row lock)", async () => {
    const { b, id, writer } = await expiredWithWriteUnderWay();
    try {
      let adopted: RunBlob[] | undefined;
      const adoption = b.ownership.adopt(["review"]).then((r) => (adopted = r.adopted));
      await sleep(200);
      expect(adopted).toBeUndefined();
      await writer.query("UPDATE runs SET blob = $2 WHERE run_id = $1", [
        id,
        JSON.stringify(blob(id, { updatedAt: "late" })),
      ]);
      await writer.query("COMMIT");
      await adoption;
      expect(adopted?.find((r) => r.runId === id)?.updatedAt).toBe("late");
    } finally {
      await writer.end();
    }
  });

  it("an adoption waiting on a save that settles the run does not keep a lease on it", async () => {
    const { b, id, writer } = await expiredWithWriteUnderWay();
    try {
      const done = blob(id, { status: "done", outcome: "succeeded" });
      await writer.query("UPDATE runs SET status = 'done', blob = $2 WHERE run_id = $1", [
        id,
        JSON.stringify(done),
      ]);
      await writer.query("DELETE FROM run_leases WHERE run_id = $1", [id]);
      const adoption = b.ownership.adopt(["review"]);
      await sleep(150);
      await writer.query("COMMIT");
      expect((await adoption).adopted.map((r) => r.runId)).not.toContain(id);
      expect(await b.ownership.holder(id)).toBeUndefined();
      expect(b.ownership.holds(id)).toBe(false);
    } finally {
      await writer.end();
    }
  });

  it("a save racing an adoption either commits before it or is fenced, never in between", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const ids = [runId(), runId(), runId(), runId(), runId()];
    for (const id of ids) await a.save(blob(id));
    await sleep(LEASE_MS + 100);
    const saves = ids.map((id) =>
      a.save(blob(id, { updatedAt: "racing" }), [], [], [event(1)]).then(
        () => "committed" as const,
        (error: unknown) => (error instanceof FencedError ? ("fenced" as const) : Promise.reject(error)),
      ),
    );
    const { adopted } = await b.ownership.adopt(["review"]);
    const outcomes = await Promise.all(saves);
    for (const [i, id] of ids.entries()) {
      const taken = adopted.find((r) => r.runId === id);
      expect(taken).toBeDefined();
      const stored = await b.load(id);
      if (outcomes[i] === "committed") {
        expect(taken?.updatedAt).toBe("racing"); // read after the claim: the write came first
        expect(await b.lastEventSeq(id)).toBe(1);
      } else {
        expect(stored?.updatedAt).toBe("2026-11-30T00:00:00.000Z");
        expect(await b.lastEventSeq(id)).toBeUndefined();
        expect(await b.versions(id)).toHaveLength(1);
      }
    }
  });

  it("many concurrent saves of one run commit in call order; saves of many runs in parallel do not deadlock", async () => {
    const a = await instance("A", { leaseMs: 20_000 });
    const b = await instance("B", { leaseMs: 20_000 });
    const id = runId();
    const at = (i: number) => `2026-11-30T00:00:00.${String(i).padStart(3, "0")}Z`;
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => a.save(blob(id, { updatedAt: at(i) }), [], [], [event(i)])),
    );
    expect((await a.load(id))?.updatedAt).toBe(at(39));
    expect((await a.versions(id)).map((v) => v.at)).toEqual(Array.from({ length: 40 }, (_, i) => at(i)));
    const ids = Array.from({ length: 30 }, () => runId());
    const work: Promise<unknown>[] = [];
    for (let round = 0; round < 4; round++)
      for (const r of ids) work.push(a.save(blob(r, { updatedAt: at(round) }), [], [], [event(round)]));
    work.push(b.ownership.adopt(["review"]), b.ownership.adopt(["review"]), a.ownership.renew());
    const results = await Promise.all(work.map((w) => outcome(w, 20_000)));
    expect(results.filter((r) => r !== "fulfilled")).toEqual([]);
    for (const r of ids) expect(a.ownership.holds(r)).toBe(true);
  }, 40_000);

  it("two instances adopting at one instant: exactly one wins, the epoch bumped once; adopt racing renew keeps every lease", async () => {
    const dead = await instance("dead");
    const ids = [runId(), runId(), runId()];
    for (const id of ids) await dead.save(blob(id));
    await dead.close();
    await sleep(LEASE_MS + 100);
    const b = await instance("B", { leaseMs: 10_000 });
    const c = await instance("C", { leaseMs: 10_000 });
    const [fromB, fromC] = await Promise.all([b.ownership.adopt(["review"]), c.ownership.adopt(["review"])]);
    for (const id of ids) {
      const winners = [fromB, fromC].filter((x) => x.adopted.some((r) => r.runId === id));
      expect(winners).toHaveLength(1);
      expect((await b.ownership.holder(id))?.epoch).toBe(2);
      expect([b.ownership.holds(id), c.ownership.holds(id)].filter(Boolean)).toHaveLength(1);
    }
    const mine = runId();
    await b.save(blob(mine));
    for (let i = 0; i < 20; i++) {
      const [renewed] = await Promise.all([b.ownership.renew(), b.ownership.adopt(["review"])]);
      expect(renewed.lost).toEqual([]);
    }
    expect((await b.ownership.holder(mine))?.epoch).toBe(1);
    expect(b.ownership.holds(mine)).toBe(true);
  });

  it("a write after the lease expired but before any adoption commits, and the adopter restores it; the old owner is fenced after", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id));
    await sleep(LEASE_MS + 100);
    expect(a.ownership.holds(id)).toBe(false);
    expect((await b.ownership.holder(id))?.expired).toBe(true);
    const late = blob(id, { updatedAt: "2026-11-30T00:00:01.000Z" });
    await a.save(late); // by design (ADR-0280 "Fence"): no one else holds it yet
    const { adopted } = await b.ownership.adopt(["review"]);
    expect(adopted.find((r) => r.runId === id)).toEqual(late);
    await expect(a.save(blob(id, { updatedAt: "2026-11-30T00:00:02.000Z" }))).rejects.toThrow(FencedError);
    expect(await b.load(id)).toEqual(late);
  });

  it("a settled run takes late rows until it is claimed again; then the old host's late rows are fenced", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id));
    await a.save(blob(id, { status: "done", updatedAt: "2026-11-30T00:00:01.000Z" }));
    const usage = {
      iid: "i",
      submissionId: "s",
      position: "0",
      promptTokens: 1,
      cachedTokens: 0,
      completionTokens: 1,
    };
    await a.recordUsage(id, [usage]);
    await a.appendEvents(id, [event(5)]);
    await b.save(blob(id, { updatedAt: "2026-11-30T00:00:02.000Z" })); // a resume on B claims it
    await expect(a.recordUsage(id, [{ ...usage, position: "1" }])).rejects.toThrow(FencedError);
    await expect(a.appendEvents(id, [event(6)])).rejects.toThrow(FencedError);
    expect(await b.usage(id)).toEqual([usage]);
  });

  it("release() while a save of the run is queued: the save commits first, and no live lease is left behind", async () => {
    const a = await instance("A");
    const id = runId();
    await a.save(blob(id));
    const saving = a.save(blob(id, { updatedAt: "2026-11-30T00:00:01.000Z" }));
    const releasing = a.ownership.release(id);
    await Promise.allSettled([saving, releasing]);
    // Released leases expire (kept for adoption, ADR-0280 "Letting go"), never renewed again.
    expect(await a.ownership.holder(id)).toMatchObject({ instanceId: "A", expired: true });
    expect((await a.load(id))?.updatedAt).toBe("2026-11-30T00:00:01.000Z");
    expect(a.ownership.holds(id)).toBe(false);
    const renewed = await a.ownership.renew();
    expect(renewed.lost).toEqual([]);
  });
});
