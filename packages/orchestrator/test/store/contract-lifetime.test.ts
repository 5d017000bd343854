/**
 * The store contract (SPEC §8, ADR-0280), a run over its life: every version of a live run kept
 * and a settled one's folded, runs listed newest first, only running runs live, a damaged run
 * named and left out, and pruning settled runs before a cut. The same cases against memory,
 * SQLite and PostgreSQL (contract-stores.ts).
 */
import type { RunFeedEvent } from "@jr2/wire";
import { expect, it } from "vitest";
import { DamagedRunError, type RunStore } from "../../src/durability/store/run-store.js";
import { blob, eachStore, event, row, type Subject, settled, turn } from "./contract-stores.js";

function lifetimeCases(subject: Subject) {
  it("keeps every version of a live run and folds a settled one: step versions dropped, then versionsKept", async () => {
    const store = await subject.open({ versionsKept: 3 });
    const timer = (seq: number): RunFeedEvent => ({
      seq,
      at: "2026-11-30T00:00:00.000Z",
      type: "timer",
      after: "t",
      value: "x",
    });
    for (let i = 0; i < 5; i++)
      await store.save(
        blob("r1", { updatedAt: `2026-11-30T00:00:0${i}.000Z` }),
        [],
        [],
        i > 0 && i < 4 ? [timer(i)] : [],
      );
    expect((await store.versions("r1")).map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
    expect((await store.versions("r1"))[0]?.cause).toEqual({ kind: "start" });
    const last = settled("r1", "2026-11-30T00:00:09.000Z");
    await store.save(last);
    const kept = await store.versions("r1");
    expect(kept.map((v) => [v.version, v.status])).toEqual([
      [3, "running"],
      [4, "running"],
      [6, "done"],
    ]);
    expect(kept[2]).toMatchObject({
      at: last.updatedAt,
      value: "finished",
      cause: { kind: "settled", status: "done" },
    });
    expect(await store.version("r1", 1)).toBeUndefined();
    expect((await store.version("r1", 6))?.blob).toEqual(last);
    expect(await store.versions("none")).toEqual([]);
    await store.close();
  });

  it("lists runs newest first (updatedAt, then runId), filtered and paged", async () => {
    const store = await subject.open();
    await store.save(blob("a", { updatedAt: "2026-11-30T00:00:01.000Z" }));
    await store.save(settled("b", "2026-11-30T00:00:02.000Z"));
    await store.save(
      settled("c", "2026-11-30T00:00:02.000Z", { status: "faulted", outcome: "faulted", workflow: "other" }),
    );
    await store.save(blob("B", { updatedAt: "2026-11-30T00:00:02.000Z", workflow: "other" }));
    await store.save(settled("d", "2026-11-30T00:00:03.000Z", { status: "cancelled", outcome: undefined }));
    const ids = async (filter?: Parameters<RunStore["list"]>[0]) =>
      (await store.list(filter)).map((r) => r.runId);
    expect(await ids()).toEqual(["d", "c", "b", "B", "a"]);
    expect(await ids({ status: "running" })).toEqual(["B", "a"]);
    expect(await ids({ workflow: "other" })).toEqual(["c", "B"]);
    expect(await ids({ outcome: "cancelled" })).toEqual(["d"]);
    expect(await ids({ limit: 2 })).toEqual(["d", "c"]);
    expect(await ids({ limit: 2, after: { updatedAt: "2026-11-30T00:00:02.000Z", runId: "c" } })).toEqual([
      "b",
      "B",
    ]);
    expect(await ids({ after: { updatedAt: "2026-11-30T00:00:02.000Z", runId: "B" } })).toEqual(["a"]);
    expect(await ids({ limit: 0 })).toEqual([]);
    const [d, c] = await store.list({ limit: 2 });
    expect(d).toEqual({
      runId: "d",
      workflow: "review",
      status: "cancelled",
      updatedAt: "2026-11-30T00:00:03.000Z",
      outcome: "cancelled",
      finalState: "finished",
    });
    expect(c).toMatchObject({ outcome: "faulted", finalState: "finished" });
    expect((await store.list({ status: "running" }))[0]).toEqual({
      runId: "B",
      workflow: "other",
      status: "running",
      updatedAt: "2026-11-30T00:00:02.000Z",
    });
    await store.close();
  });

  it("prunes the log, transcripts, Turns and versions of settled runs updated before the cut only", async () => {
    const store = await subject.open();
    const fill = async (runId: string) => {
      await store.appendEvents(runId, [event(0), event(1)]);
      await store.recordTranscript(runId, [row("0", "t1")]);
      await store.recordTurns(runId, [turn("t1", "2026-11-30T00:00:00.000Z")]);
    };
    await store.save(settled("old", "2026-11-01T00:00:00.000Z"));
    await store.save(blob("live", { updatedAt: "2026-11-01T00:00:00.000Z" }));
    await store.save(blob("drift", { status: "drifted", updatedAt: "2026-11-01T00:00:00.000Z" }));
    await store.save(settled("new", "2026-11-29T00:00:00.000Z"));
    for (const id of ["old", "live", "drift", "new"]) await fill(id);
    // old: 2 events + 1 transcript row + 1 Turn + 1 version.
    expect(await store.pruneEvents("2026-11-15T00:00:00.000Z")).toBe(5);
    expect(await store.events("old", 0, 10)).toEqual([]);
    expect(await store.transcript("old", "t1")).toEqual([]);
    expect(await store.turns("old")).toEqual([]);
    expect(await store.versions("old")).toEqual([]);
    for (const id of ["live", "drift", "new"]) {
      expect(await store.events(id, 0, 10)).toHaveLength(2);
      expect(await store.turns(id)).toHaveLength(1);
      expect(await store.versions(id)).toHaveLength(1);
    }
    expect(await store.load("old")).toBeDefined();
    await store.close();
  });

  it("returns only running runs as live", async () => {
    const store = await subject.open();
    await store.save(blob("r1"));
    await store.save(blob("r2", { status: "drifted" }));
    await store.save(settled("r3", "2026-11-30T00:00:01.000Z"));
    await store.save(blob("r4"));
    expect((await store.live()).map((b) => b.runId).sort()).toEqual(["r1", "r4"]);
    expect((await store.live()).find((b) => b.runId === "r1")).toEqual(blob("r1"));
    await store.close();
  });

  it.skipIf(!subject.damage)(
    "says which run is damaged; live() leaves it out, the others still read",
    async () => {
      const store = await subject.open();
      await store.save(blob("good"));
      await store.save(blob("bad"));
      await subject.damage?.(store, "bad");
      await expect(store.load("bad")).rejects.toThrow(DamagedRunError);
      await expect(store.load("bad")).rejects.toThrow(/run `bad`/);
      expect((await store.live()).map((b) => b.runId)).toEqual(["good"]);
      expect(await store.load("good")).toEqual(blob("good"));
      await store.close();
    },
  );
}

eachStore("a run's lifetime", lifetimeCases);
