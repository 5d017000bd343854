/**
 * The run event log in the store (ADR-0256): each feed event stored once by (run, seq) with its
 * original seq and at, read in pages from a seq, its last seq, carried by a save's transaction,
 * and retention deleting only old settled runs' logs — the SQLite store and the memory store alike.
 */
import type { RunFeedEvent } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { blob, memoryAndSqlite } from "./store-fixture.js";

const status = (seq: number, at = `2026-01-01T00:00:0${seq % 10}.000Z`): RunFeedEvent => ({
  type: "status",
  status: "running",
  value: `s${seq}`,
  seq,
  at,
});
const usage = (seq: number): RunFeedEvent => ({
  type: "usage",
  child: "a#b",
  promptTokens: 10,
  cachedTokens: null,
  completionTokens: 2,
  seq,
  at: "2026-01-01T00:00:00.000Z",
});

describe.each(memoryAndSqlite)("the %s store's event log (ADR-0256)", (_name, open) => {
  it("keeps each event once by seq, with its original seq and at, and pages from a seq", async () => {
    const store = open();
    await store.appendEvents("r1", [status(0), usage(1), status(2)]);
    await store.appendEvents("r1", [status(1), status(3)]); // seq 1 is stored already
    await store.appendEvents("r2", [status(0)]);
    const all = await store.events("r1", 0, 100);
    expect(all.map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    expect(all[1]).toEqual(usage(1));
    expect(all[0]!.at).toBe("2026-01-01T00:00:00.000Z");
    expect((await store.events("r1", 1, 2)).map((e) => e.seq)).toEqual([1, 2]);
    expect(await store.events("r1", 9, 10)).toEqual([]);
    expect(await store.lastEventSeq("r1")).toBe(3);
    expect(await store.lastEventSeq("nope")).toBeUndefined();
    await store.close();
  });

  it("stores a save's events with its blob, and never puts the log in the blob", async () => {
    const store = open();
    await store.save(blob("r1", "running", "2026-01-01T00:00:00.000Z"), [], [], [status(0), status(1)]);
    expect((await store.events("r1", 0, 10)).map((e) => e.seq)).toEqual([0, 1]);
    expect(JSON.stringify(await store.load("r1"))).not.toContain("s1");
    await store.close();
  });

  it("retention deletes the logs of settled runs updated before the cut-off, never a live or drifted run's", async () => {
    const store = open();
    const old = "2026-01-01T00:00:00.000Z";
    for (const [id, s] of [
      ["done-old", "done"],
      ["faulted-old", "faulted"],
      ["live-old", "running"],
      ["drifted-old", "drifted"],
    ] as const) {
      await store.save(blob(id, s, old));
      await store.appendEvents(id, [status(0), status(1)]);
    }
    await store.save(blob("done-new", "done", "2026-03-01T00:00:00.000Z"));
    await store.appendEvents("done-new", [status(0)]);
    // 4 log rows and the 2 versions of the old settled runs (ADR-0270).
    expect(await store.pruneEvents("2026-02-01T00:00:00.000Z")).toBe(6);
    expect(await store.events("done-old", 0, 10)).toEqual([]);
    expect(await store.events("faulted-old", 0, 10)).toEqual([]);
    expect(await store.events("live-old", 0, 10)).toHaveLength(2);
    expect(await store.events("drifted-old", 0, 10)).toHaveLength(2);
    expect(await store.events("done-new", 0, 10)).toHaveLength(1);
    // The runs themselves stay.
    expect(await store.load("done-old")).toBeDefined();
    await store.close();
  });
});
