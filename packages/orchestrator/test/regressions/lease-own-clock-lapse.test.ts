/**
 * Regression (issue 24 item 1, ADR-0283): runs failed by re-adoption on a loaded box.
 * Root cause: `holdsRun` let a run go as soon as this instance's OWN clock said its lease was
 * older than `leaseMs` — event-loop lag past two thirds of a short lease (JR2_LEASE_MS=3000)
 * was enough, although the database still named this instance at the same epoch. The let-go
 * expired the row, the next tick adopted the run again in the same process (154 let-gos and
 * 175 adoptions in 2 minutes), and a restore that met the earlier incarnation's Turn still
 * registered faulted it `conflict` ("already live … one live surface per address"); the let-go
 * run's readers went on polling the Harness.
 * Now: a lapsed clock check asks the database (a renewal fenced by epoch) and only its answer
 * lets a run go; a let-go tears the incarnation down (Turns deregistered, readers stopped);
 * and a process does not adopt a run it let go of within one lease length.
 * On the shared-store double and on PostgreSQL (skipped without `JR2_TEST_PG_URL`).
 */
import { afterEach, describe, expect, it } from "vitest";
import { INSTANCE_CALLER } from "../../src/index.js";
import { startFakeHarness } from "../fake-harness-server.js";
import { hostOn, until } from "../host-on-fake-harness.js";
import { LEASE_MS, machine, runWithLiveTurn } from "../ownership-fixture.js";
import { pgAdminUrl } from "../pg.js";
import { pgBackend } from "../pg-shared-backend.js";
import { doubleBackend, type SharedBackend } from "../shared-store.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function open(backend: SharedBackend) {
  const fake = await startFakeHarness({ script: () => ({ kind: "events", events: [] }) });
  const { storeA, storeB, reader, done } = await backend.open(LEASE_MS);
  const a = hostOn(fake, machine, {}, storeA);
  cleanups.push(async () => {
    storeA.resume();
    await a.close();
    await storeB.close();
    await done();
    await fake.close();
  });
  await a.restore();
  return { fake, reader, storeA, storeB, a };
}

const backends = [doubleBackend, ...(pgAdminUrl() ? [pgBackend] : [])];

describe.each(backends)("a lapsed clock check on $name (ADR-0283)", (backend) => {
  it("keeps the run when the database still names this instance: no let-go, no re-adoption, no conflict", async () => {
    const { fake, reader, storeA, storeB, a } = await open(backend);
    const { runId, iid } = await runWithLiveTurn(a, fake, reader);
    expect(await storeB.ownership.holder(runId)).toMatchObject({ instanceId: "A", epoch: 1 });

    // Paused past its lease (a stalled event loop): its own clock says the lease ran out, the
    // row expired by the database's clock too, and nobody adopted it.
    // Then its clock runs while the renewal's answer is still to come: its own check lapsed.
    storeA.pause();
    await sleep(LEASE_MS * 2);
    storeA.wake();
    const gone: number[] = [];
    const watch = async (ticks: number) => {
      for (let t = 0; t < ticks; t++) {
        if (!a.isLive(runId)) gone.push(t);
        await sleep(LEASE_MS / 10);
      }
    };
    await watch(15);
    const readsBefore = fake.requests.filter((r) => r.instance === "A").length;
    storeA.resume();
    await watch(15);
    expect(gone, "the run left A's memory (let go) although A's lease was still the database's A/1").toEqual(
      [],
    );
    expect(storeA.lostSeen).toEqual([]);
    // Its reads went on once the database answered.
    await until(
      "A reads the Turn's stream again",
      () => fake.requests.filter((r) => r.instance === "A").length > readsBefore,
    );
    expect(await storeB.ownership.holder(runId)).toMatchObject({ instanceId: "A", epoch: 1, expired: false });
    // Still the same live Turn: its surface answers, its pick is decided once.
    expect(() => a.readSurface(iid, INSTANCE_CALLER)).not.toThrow();
    const answer = await a.deliverPick(iid, INSTANCE_CALLER, { name: "finish", toolCallId: "c1" });
    expect(answer).toMatchObject({ delivered: true, turnComplete: true });
    await until("the run done", async () => (await a.getRun(runId)).status === "done");
    expect(fake.admissions).toHaveLength(1);
  });

  it("a run let go of is not adopted again by the same process within a lease, then is when nobody took it", async () => {
    const { fake, reader, storeA, storeB, a } = await open(backend);
    const { runId } = await runWithLiveTurn(a, fake, reader);
    storeA.pause(); // A stalls; B (a store without a host) takes the run once the lease ran out
    await sleep(LEASE_MS + 100);
    expect((await storeB.ownership.adopt(["w"])).adopted.map((b) => b.runId)).toEqual([runId]);
    await storeB.ownership.release(runId); // B lets it go
    await sleep(5);
    expect((await storeB.ownership.holder(runId))?.expired).toBe(true);
    // Not taken back by B at once: a let-go is not undone by the next tick of the same process.
    expect((await storeB.ownership.adopt(["w"])).adopted).toEqual([]);
    await sleep(LEASE_MS + 50);
    // A lease length on, the row is still expired (nobody holds the run): B takes it then.
    expect((await storeB.ownership.adopt(["w"])).adopted.map((b) => b.runId)).toEqual([runId]);
    expect(await storeB.ownership.holder(runId)).toMatchObject({ instanceId: "B", epoch: 3 });
  });
});
