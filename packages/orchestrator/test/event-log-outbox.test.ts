/**
 * The event log's outbox rule (ADR-0256 over ADR-0250): an event reporting a state change is
 * committed in the save of that state — a failed save leaves no event of that state — while a
 * fact (usage) is a row on its own, needing no RunBlob save; seq goes on from the stored log
 * after a restore; the feed keeps a bounded tail and names a Gate's answerer.
 */
import type { RunFeedEvent } from "@jr2/wire";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createRunPersistence } from "../src/durability/persistence.js";
import type { SavedRun } from "../src/durability/saved-run.js";
import { createMemoryStore, type RunStore } from "../src/durability/store/run-store.js";
import { createRunHost, defineEvent, INSTANCE_CALLER } from "../src/index.js";
import { createRunFeed } from "../src/runs/feed.js";
import { oneTurnMachine } from "./helpers.js";

const _finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
const machine = oneTurnMachine();

const turns = () => new Promise((r) => setImmediate(r));
async function drain(n = 10) {
  for (let i = 0; i < n; i++) await turns();
}

describe("the event log's outbox rule (ADR-0256)", () => {
  it("a failed save leaves no event of the state it would have saved (nor the pick that caused it)", async () => {
    const inner = createMemoryStore();
    const store: RunStore = {
      ...inner,
      save: (blob, picks, usage, events) =>
        picks?.length ? Promise.reject(new Error("disk full")) : inner.save(blob, picks, usage, events),
    };
    const host = createRunHost({ workflows: new Map([["one", machine]]), store });
    const { runId } = await host.startRun("one", {});
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    const seen: RunFeedEvent[] = [];
    (await host.feedOf(runId)).subscribe((e) => seen.push(e));
    await expect(
      host.deliverPick(iid, INSTANCE_CALLER, { name: "finish", arguments: { why: "x" }, toolCallId: "c1" }),
    ).rejects.toMatchObject({ code: "JR2_ERR_STORE_FAILING" });
    await drain();
    const stored = await inner.events(runId, 0, 100);
    expect(stored.map((e) => e.type)).toContain("status"); // the first life's `working`
    expect(stored.some((e) => e.type === "pick")).toBe(false);
    expect(stored.some((e) => e.type === "status" && e.status === "done")).toBe(false);
    // …and a follower was never told of them either.
    expect(seen.some((e) => e.type === "pick" || (e.type === "status" && e.status === "done"))).toBe(false);
    await host.close();
  });

  it("commits the pick (with its arguments) and the state it caused in the save with its answer", async () => {
    const store = createMemoryStore();
    const saves: number[] = [];
    const spy: RunStore = {
      ...store,
      save: (blob, picks, usage, events) => {
        if (picks?.length) saves.push(events?.length ?? 0);
        return store.save(blob, picks, usage, events);
      },
    };
    const host = createRunHost({ workflows: new Map([["one", machine]]), store: spy });
    const { runId } = await host.startRun("one", {});
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    await host.deliverPick(iid, INSTANCE_CALLER, {
      name: "finish",
      arguments: { why: "x" },
      toolCallId: "c1",
    });
    expect(saves[0]).toBeGreaterThanOrEqual(2); // the pick and the `done` status, in that transaction
    const log = await store.events(runId, 0, 100);
    const pick = log.find((e) => e.type === "pick");
    expect(pick).toMatchObject({ name: "finish", arguments: { why: "x" } });
    const done = log.find((e) => e.type === "status" && e.status === "done")!;
    expect(done.seq).toBeGreaterThan(pick!.seq);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i));
    await host.close();
  });

  it("a usage event is a row on its own: no RunBlob save", async () => {
    const inner = createMemoryStore();
    let blobSaves = 0;
    const store: RunStore = {
      ...inner,
      save: (...args) => {
        blobSaves++;
        return inner.save(...args);
      },
    };
    const persistence = createRunPersistence(store, pino({ level: "silent" }), () => new Date());
    const run = { runId: "r1", frozen: false } as SavedRun;
    const event: RunFeedEvent = {
      type: "usage",
      child: "a#b",
      promptTokens: 5,
      cachedTokens: 1,
      completionTokens: 2,
      seq: 7,
      at: "2026-01-01T00:00:00.000Z",
    };
    persistence.recordEvent(run, event);
    persistence.recordEvent(run, { ...event, seq: 8 });
    await drain(3);
    expect(await inner.events("r1", 0, 10)).toEqual([event, { ...event, seq: 8 }]);
    expect(blobSaves).toBe(0);
    await persistence.close();
  });

  it("after a restore, seq goes on from the stored log: nothing renumbered, nothing twice", async () => {
    const store = createMemoryStore();
    const first = createRunHost({ workflows: new Map([["one", machine]]), store });
    const { runId } = await first.startRun("one", {});
    await drain();
    const before = await store.events(runId, 0, 100);
    expect(before.length).toBeGreaterThan(0);
    await first.close();
    const second = createRunHost({ workflows: new Map([["one", machine]]), store });
    await second.restore();
    const iid = (await second.getRun(runId)).turns[0]!.iid;
    await second.deliverPick(iid, INSTANCE_CALLER, { name: "finish", arguments: {}, toolCallId: "c1" });
    await drain();
    const after = await store.events(runId, 0, 100);
    expect(after.slice(0, before.length)).toEqual(before);
    const seqs = after.map((e) => e.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(Math.min(...seqs.slice(before.length))).toBe(before.at(-1)!.seq + 1);
    expect(after.at(-1)).toMatchObject({ type: "status", status: "done" });
    await second.close();
  });
});

describe("the feed's memory (ADR-0256)", () => {
  it("keeps a bounded tail, numbered on from nextSeq, and sinks every event", () => {
    const sunk: number[] = [];
    const feed = createRunFeed(() => new Date(0), { nextSeq: 10, tail: 3, sink: (e) => sunk.push(e.seq) });
    for (let i = 0; i < 5; i++) feed.append({ type: "retry", child: "a#b", attempt: i, reason: "x" });
    expect(feed.since().map((e) => e.seq)).toEqual([12, 13, 14]);
    expect(feed.since(13).map((e) => e.seq)).toEqual([13, 14]);
    expect(sunk).toEqual([10, 11, 12, 13, 14]);
  });

  it("tells a committed batch after its commit, in order, and drops it when the commit fails", async () => {
    const feed = createRunFeed(() => new Date(0));
    const told: number[] = [];
    feed.subscribe((e) => told.push(e.seq));
    const release = feed.hold();
    feed.append({ type: "status", status: "running", value: "a" });
    let commit!: (ok: boolean) => void;
    release(
      [{ type: "pick", child: "a#b", agent: "b", name: "n", answer: {} }],
      new Promise((r) => {
        commit = r;
      }),
    );
    feed.append({ type: "retry", child: "a#b", attempt: 1, reason: "x" });
    expect(told).toEqual([]);
    commit(true);
    await drain(2);
    expect(told).toEqual([0, 1, 2]);
    const again = feed.hold();
    feed.append({ type: "status", status: "running", value: "b" });
    again([], Promise.resolve(false));
    await drain(2);
    expect(told).toEqual([0, 1, 2]);
    expect(feed.since().map((e) => e.seq)).toEqual([0, 1, 2]);
  });
});
