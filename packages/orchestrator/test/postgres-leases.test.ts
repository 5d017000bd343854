/**
 * What only the PostgreSQL store has, first: leases (ADR-0280) — the claim on a run's first
 * save and the fence, lease expiry and adoption with a bumped epoch, letting go (a graceful stop,
 * a settling save, release), and an instance id reused by a restart or by mistake. Needs the
 * test cluster (JR2_TEST_PG_URL; `bash scripts/with-pg.sh …`).
 */
import { expect, it } from "vitest";
import { FencedError } from "../src/durability/store/ownership.js";
import { describePg } from "./pg.js";
import { pgInstances } from "./pg-instances.js";
import { blob, event, LEASE_MS, sleep } from "./pg-store-fixture.js";

describePg("the PostgreSQL store's leases, shared by several instances (ADR-0280)", () => {
  const pgs = pgInstances("jr2_leases", LEASE_MS);
  const { runId } = pgs;
  const instance = pgs.instance.bind(pgs);

  it("claims a run on its first save; another instance's save of it is fenced and commits nothing", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id), [], [], [event(0)]);
    expect(a.ownership.holds(id)).toBe(true);
    expect(b.ownership.holds(id)).toBe(false);
    expect(await b.ownership.holder(id)).toMatchObject({
      runId: id,
      instanceId: "A",
      epoch: 1,
      expired: false,
    });
    const theirs = blob(id, { updatedAt: "2026-12-01T00:00:00.000Z", status: "done" });
    await expect(b.save(theirs, [], [], [event(1)])).rejects.toThrow(FencedError);
    await expect(b.appendEvents(id, [event(2)])).rejects.toThrow(FencedError);
    await expect(
      b.recordUsage(id, [
        { iid: "i", submissionId: "s", position: "0", promptTokens: 1, cachedTokens: 0, completionTokens: 1 },
      ]),
    ).rejects.toThrow(FencedError);
    expect(await a.load(id)).toEqual(blob(id));
    expect(await a.lastEventSeq(id)).toBe(0);
    expect(await a.versions(id)).toHaveLength(1);
    expect(await a.usage(id)).toEqual([]);
    expect((await a.ownership.holder(id))?.instanceId).toBe("A");
  });

  it("after the lease expires another instance adopts the run with a bumped epoch; the old owner lets go", async () => {
    const a = await instance("A");
    const b = await instance("B", { leaseMs: 1_000 });
    const id = runId();
    await a.save(blob(id));
    await sleep(LEASE_MS + 150);
    expect(a.ownership.holds(id)).toBe(false); // by its own clock, before any I/O
    const { adopted } = await b.ownership.adopt(["review"]);
    expect(adopted.map((r) => r.runId)).toContain(id);
    expect(adopted.find((r) => r.runId === id)).toEqual(blob(id));
    expect(await b.ownership.holder(id)).toMatchObject({ instanceId: "B", epoch: 2, expired: false });
    expect(b.ownership.holds(id)).toBe(true);
    expect(await a.ownership.renew()).toEqual({ lost: [id] });
    await expect(a.save(blob(id, { updatedAt: "2026-12-01T00:00:00.000Z" }))).rejects.toThrow(FencedError);
    expect(a.ownership.holds(id)).toBe(false);
    await b.save(blob(id, { updatedAt: "2026-12-02T00:00:00.000Z" }));
    expect((await b.load(id))?.updatedAt).toBe("2026-12-02T00:00:00.000Z");
    // A renewal keeps B's lease alive past its length (1 s).
    await sleep(600);
    expect(await b.ownership.renew()).toEqual({ lost: [] });
    await sleep(600);
    expect(b.ownership.holds(id)).toBe(true);
    expect((await a.ownership.adopt(["review"])).adopted.map((r) => r.runId)).not.toContain(id);
  });

  it("a write fenced after a lost lease is refused before renew() reports it", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id));
    await sleep(LEASE_MS + 100);
    await b.ownership.adopt(["review"]);
    await expect(a.appendEvents(id, [event(5)])).rejects.toMatchObject({
      name: "FencedError",
      runId: id,
      epoch: 1,
    });
    expect(await a.lastEventSeq(id)).toBeUndefined();
    expect(await a.ownership.renew()).toEqual({ lost: [] }); // already forgotten by the fenced write
  });

  it("a graceful stop expires its leases: a peer adopts at once, not a lease length later", async () => {
    const a = await instance("A", { leaseMs: 60_000 });
    const b = await instance("B", { leaseMs: 60_000 });
    const id = runId();
    await a.save(blob(id, { workflow: "graceful" }));
    expect((await b.ownership.adopt(["graceful"])).adopted).toEqual([]);
    await a.ownership.relinquish();
    expect(a.ownership.holds(id)).toBe(false);
    await sleep(5); // the database's now() moves past the expiry
    expect((await b.ownership.adopt(["graceful"])).adopted.map((r) => r.runId)).toEqual([id]);
    await expect(a.save(blob(id, { workflow: "graceful" }))).rejects.toBeInstanceOf(FencedError);
  });

  it("adopts only runs of the workflows listed, and never a live lease", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const c = await instance("C", { leaseMs: 60_000 });
    const other = runId();
    const live = runId();
    await a.save(blob(other, { workflow: "elsewhere" }));
    await c.save(blob(live)); // a lease that does not expire during the test
    await sleep(LEASE_MS + 100);
    const { adopted } = await b.ownership.adopt(["review"]);
    expect(adopted.map((r) => r.runId)).not.toContain(other);
    expect(adopted.map((r) => r.runId)).not.toContain(live);
    expect(await b.ownership.holder(other)).toMatchObject({ instanceId: "A", expired: true });
    expect(await b.ownership.adopt([])).toEqual({ adopted: [], damaged: [] });
  });

  it("a restarted instance with the same id adopts its own leases at once; a damaged blob is reported", async () => {
    const a = await instance("A", { leaseMs: 60_000 });
    const id = runId();
    const bad = runId();
    await a.save(blob(id));
    await a.save(blob(bad));
    await a.pool.query("UPDATE runs SET blob = 'nope' WHERE run_id = $1", [bad]);
    const again = await instance("A", { leaseMs: 60_000 });
    const adoption = await again.ownership.adopt(["review"]);
    expect(adoption.adopted.map((r) => r.runId)).toContain(id);
    expect(adoption.damaged).toEqual([{ runId: bad, reason: expect.stringContaining(`run \`${bad}\``) }]);
    expect(await again.ownership.holder(id)).toMatchObject({ instanceId: "A", epoch: 2 });
    await expect(a.save(blob(id))).rejects.toThrow(FencedError);
    // The adopter does not adopt what it holds already.
    expect((await again.ownership.adopt(["review"])).adopted.map((r) => r.runId)).not.toContain(id);
  });

  it("two live processes given the same JR2_INSTANCE_ID do not take a run back and forth", async () => {
    // A restart takes over its own leases once (its first adoption); after that, a lease row
    // naming this id that this process does not hold is another live process's (a second
    // instance misconfigured with the same id), never re-taken: the run stays with one of them.
    const first = await instance("same", { leaseMs: 60_000 });
    await first.ownership.adopt(["dup"]); // its start-up restore
    const id = runId();
    await first.save(blob(id, { workflow: "dup" })); // a workflow of its own: no other test's runs
    const second = await instance("same", { leaseMs: 60_000 });
    expect((await second.ownership.adopt(["dup"])).adopted.map((r) => r.runId)).toEqual([id]);
    expect((await first.ownership.renew()).lost).toEqual([id]);
    for (let tick = 0; tick < 3; tick++) {
      expect((await first.ownership.adopt(["dup"])).adopted).toEqual([]);
      expect((await second.ownership.renew()).lost).toEqual([]);
      expect((await second.ownership.adopt(["dup"])).adopted).toEqual([]);
    }
    expect(await second.ownership.holder(id)).toMatchObject({ instanceId: "same", epoch: 2 });
  });

  it("a settling save deletes the lease row; release expires it (kept); a settled run is claimed anew", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id));
    await a.save(blob(id, { status: "done", outcome: "succeeded" }));
    expect(await a.ownership.holder(id)).toBeUndefined();
    expect(a.ownership.holds(id)).toBe(false);
    await b.save(blob(id, { updatedAt: "2026-12-01T00:00:00.000Z" })); // a resume on B
    expect(await b.ownership.holder(id)).toMatchObject({ instanceId: "B", epoch: 1 });
    await b.ownership.release(id);
    // Kept, expired: the run is moving (not settled) until adopted, and the adopter bumps the epoch.
    expect(await b.ownership.holder(id)).toMatchObject({ instanceId: "B", epoch: 1, expired: true });
    expect(b.ownership.holds(id)).toBe(false);
    expect((await a.ownership.adopt(["review"])).adopted.map((r) => r.runId)).toContain(id);
    expect(await a.ownership.holder(id)).toMatchObject({ instanceId: "A", epoch: 2 });
    await a.ownership.release("never-held");
  });
});
