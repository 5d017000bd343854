/**
 * Run ownership in the host (issue 15 items 2 and 3, ADR-0280), on two hosts sharing one
 * store (a {@link SharedBackend}: the memory double, or PostgreSQL): a paused owner's run is adopted by the other
 * within the lease, its Turn re-attached by turnId; the resumed owner finds its lease lost,
 * its writes fenced, sends the Harness no admission and no abort after the adoption, answers
 * no pick (503 JR2_ERR_RUN_MOVED) and lets the run go.
 */

import { Jr2Error } from "@jr2/wire";
import { afterEach, describe, expect, it } from "vitest";
import { INSTANCE_CALLER } from "../src/index.js";
import { startFakeHarness } from "./fake-harness-server.js";
import { hostOn, until } from "./host-on-fake-harness.js";
import { LEASE_MS, machine, runWithLiveTurn } from "./ownership-fixture.js";
import type { SharedBackend } from "./shared-store.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Two hosts A and B on one shared store and one fake Harness whose Submissions run until picked. */
async function twoHosts(backend: SharedBackend) {
  const fake = await startFakeHarness({ script: () => ({ kind: "events", events: [] }) });
  const { storeA, storeB, reader, done } = await backend.open(LEASE_MS);
  const a = hostOn(fake, machine, {}, storeA);
  const b = hostOn(fake, machine, {}, storeB);
  cleanups.push(async () => {
    storeA.resume();
    await a.close();
    await b.close();
    await done();
    await fake.close();
  });
  await a.restore();
  await b.restore();
  const leaseOf = (runId: string) => storeB.ownership.holder(runId);
  return { fake, reader, leaseOf, storeA, a, b };
}

/** The ownership tests on `backend`. */
export function ownershipSuite(backend: SharedBackend): void {
  describe(`run ownership on ${backend.name} (ADR-0280)`, () => {
    it("a paused owner's run is adopted within the lease; the resumed owner lets go and sends nothing", async () => {
      const { fake, reader, leaseOf, storeA, a, b } = await twoHosts(backend);
      const { runId, iid } = await runWithLiveTurn(a, fake, reader);
      const first = await leaseOf(runId);
      expect(first).toMatchObject({ instanceId: "A" });
      expect(fake.requests.filter((r) => r.call === "admit").map((r) => r.instance)).toEqual(["A"]);

      const pausedAt = Date.now();
      storeA.pause();
      await until("B hosts the run", () => b.isLive(runId));
      expect(Date.now() - pausedAt).toBeLessThan(LEASE_MS * 4);
      expect(await leaseOf(runId)).toMatchObject({ instanceId: "B", epoch: first!.epoch + 1 });
      // Re-attached by turnId: B reads the ledgered Submission's stream, admits nothing new.
      await until("B reads the Turn's stream", () =>
        fake.requests.some((r) => r.call === "read" && r.instance === "B" && r.iid === iid),
      );
      const adoptedAt = fake.requests.length;

      const stale = (await reader.load(runId))!;
      storeA.resume();
      await until("A lets the run go", () => !a.isLive(runId));
      expect(a.resident().runs).toBe(0);
      // A pick reaching A now is told to go to the owner (503), never "the Turn is over" (404).
      await expect(
        a.deliverPick(iid, INSTANCE_CALLER, { name: "finish", toolCallId: "c0" }),
      ).rejects.toMatchObject({ code: "JR2_ERR_RUN_MOVED", statusCode: 503 });
      // Its renewal reported the lease lost, and its writes are fenced.
      await until("A's renewal reports the lease lost", () => storeA.lostSeen.includes(runId));
      await expect(storeA.save({ ...stale, updatedAt: new Date().toISOString() })).rejects.toMatchObject({
        name: "FencedError",
        runId,
      });
      // A wrote nothing after the adoption: the shared store holds B's lease and B's saves.
      expect(await leaseOf(runId)).toMatchObject({ instanceId: "B", epoch: first!.epoch + 1 });

      const answer = await b.deliverPick(iid, INSTANCE_CALLER, { name: "finish", toolCallId: "c1" });
      expect(answer).toMatchObject({ delivered: true, turnComplete: true });
      await until("the run done", async () => (await b.getRun(runId)).status === "done");
      await new Promise((r) => setTimeout(r, LEASE_MS / 2));
      const fromA = fake.requests.slice(adoptedAt).filter((r) => r.instance === "A");
      expect(fromA.filter((r) => r.call !== "read")).toEqual([]);
      expect(fake.admissions).toHaveLength(1);
      // The Turn ended on B: B aborted its Submission (once), A never did.
      expect(fake.requests.filter((r) => r.call === "abort").map((r) => r.instance)).toEqual(["B"]);
      expect(await leaseOf(runId)).toBeUndefined(); // settled: the lease row is gone
    });

    it("a pick reaching the stale owner is fenced: 503 JR2_ERR_RUN_MOVED, not answered, the run let go", async () => {
      const { fake, reader, storeA, a, b } = await twoHosts(backend);
      const { runId, iid } = await runWithLiveTurn(a, fake, reader);
      storeA.pause(); // A's clock stands: it still believes it holds the lease
      await until("B hosts the run", () => b.isLive(runId));
      const adoptedAt = fake.requests.length;

      const refused = await a.deliverPick(iid, INSTANCE_CALLER, { name: "finish", toolCallId: "c1" }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(Jr2Error);
      expect(refused).toMatchObject({ code: "JR2_ERR_RUN_MOVED" });
      expect((refused as Jr2Error).statusCode).toBe(503);
      expect(a.isLive(runId)).toBe(false);
      // Not stored: the Harness re-sends it to B, which decides it afresh — once.
      expect(await reader.pickAnswer(runId, { iid, toolCallId: "c1" })).toBeUndefined();
      // A's health reports no failing store: a fence is not a failed save (ADR-0253).
      expect(a.storeHealth()).toMatchObject({ store: "ok", frozenRuns: 0 });

      const answer = await b.deliverPick(iid, INSTANCE_CALLER, { name: "finish", toolCallId: "c1" });
      expect(answer).toMatchObject({ delivered: true });
      await until("the run done", async () => (await b.getRun(runId)).status === "done");
      storeA.resume();
      await new Promise((r) => setTimeout(r, LEASE_MS / 2));
      const fromA = fake.requests.slice(adoptedAt).filter((r) => r.instance === "A" && r.call !== "read");
      expect(fromA).toEqual([]);
    });
  });
}
