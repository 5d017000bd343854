/**
 * A run's saved history in the store (ADR-0270): each save is also kept as a numbered version
 * with its cause, in the save's transaction; a settled run keeps its last N; retention by age
 * deletes versions with the log — the SQLite store and the memory store alike.
 */
import type { RunFeedEvent } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import {
  createMemoryStore,
  type RunBlob,
  type RunStore,
  type StoreOptions,
} from "../../src/durability/store/run-store.js";
import { openSqliteStore } from "../../src/durability/store/sqlite.js";
import { versionsKeptOf } from "../../src/durability/store/versions.js";
import { sqliteDir } from "./store-fixture.js";

const stores: Array<[string, (o?: StoreOptions) => RunStore]> = [
  ["memory", (o) => createMemoryStore(o)],
  [
    "sqlite",
    (o) => {
      return openSqliteStore(sqliteDir("jr2-versions-"), o);
    },
  ],
];

function blob(runId: string, status: RunBlob["status"], value: unknown, updatedAt: string): RunBlob {
  return {
    runId,
    workflow: "w",
    machineFingerprint: "f",
    status,
    snapshot: { value, context: { n: 1 } },
    input: null,
    ledger: {},
    epochs: {},
    timers: [],
    usage: { promptTokens: null, cachedTokens: null, completionTokens: null },
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt,
  };
}
const at = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, "0")}.000Z`;
const pick: RunFeedEvent = {
  type: "pick",
  seq: 3,
  at: at(3),
  child: "review#reviewer",
  agent: "reviewer",
  name: "approve",
  answer: { ok: true },
};

describe.each(stores)("the %s store's versions (ADR-0270)", (_name, open) => {
  it("numbers each save 1, 2, … per run with its state value, status, at and cause", async () => {
    const store = open();
    await store.save(blob("r1", "running", "implement", at(1)));
    await store.save(blob("r2", "running", "a", at(1)));
    await store.save(blob("r1", "running", "review", at(2)));
    await store.save(blob("r1", "running", "review", at(3)), [], [], [pick]);
    // A live run keeps every save, `step` ones too (ADR-0270).
    expect((await store.versions("r1")).map((v) => v.cause.kind)).toEqual(["start", "step", "pick"]);
    await store.save(blob("r1", "done", "merged", at(4)));
    // Settling folds them: the `step` version is dropped (issue 22, ADR-0277).
    const listed = await store.versions("r1");
    expect(listed).toEqual([
      { version: 1, at: at(1), value: "implement", status: "running", cause: { kind: "start" } },
      {
        version: 3,
        at: at(3),
        value: "review",
        status: "running",
        cause: { kind: "pick", child: "review#reviewer", agent: "reviewer", name: "approve" },
      },
      { version: 4, at: at(4), value: "merged", status: "done", cause: { kind: "settled", status: "done" } },
    ]);
    expect((await store.versions("r2")).map((v) => v.version)).toEqual([1]);
    expect(await store.versions("nope")).toEqual([]);
    await store.close();
  });

  it("reads one version whole (its blob as saved), undefined for one never kept", async () => {
    const store = open();
    await store.save(blob("r1", "running", "implement", at(1)));
    await store.save(blob("r1", "running", "review", at(2)));
    const v1 = await store.version("r1", 1);
    expect(v1?.blob).toEqual(blob("r1", "running", "implement", at(1)));
    expect(v1?.cause).toEqual({ kind: "start" });
    expect(await store.version("r1", 3)).toBeUndefined();
    expect(await store.version("nope", 1)).toBeUndefined();
    await store.close();
  });

  it("keeps an explicit cause (a fork's) over the one the events say", async () => {
    const store = open();
    const cause = { kind: "fork", from: { runId: "r0", version: 2 }, by: "cli" } as const;
    await store.save(blob("r1", "running", "review", at(1)), [], [], [pick], cause);
    expect((await store.versions("r1"))[0]?.cause).toEqual(cause);
    await store.close();
  });

  it("keeps every version of a live run; settling drops its step versions, then keeps the last N", async () => {
    const store = open({ versionsKept: 3 });
    for (let s = 1; s <= 6; s++)
      await store.save(
        blob("r1", "running", `s${s}`, at(s)),
        [],
        [],
        s % 2 === 0 ? [{ ...pick, seq: s }] : [],
      );
    expect((await store.versions("r1")).map((v) => v.cause.kind)).toEqual([
      "start",
      "pick",
      "step",
      "pick",
      "step",
      "pick",
    ]);
    await store.save(blob("r1", "faulted", "s6", at(7)));
    expect((await store.versions("r1")).map((v) => v.version)).toEqual([4, 6, 7]);
    expect(await store.version("r1", 5)).toBeUndefined();
    expect((await store.version("r1", 4))?.blob).toEqual(blob("r1", "running", "s4", at(4)));
    await store.close();
  });

  it("reads a Turn's admission from a new ledger entry when the save carries no admission event", async () => {
    const store = open();
    const first = blob("r1", "running", "implement", at(1));
    await store.save(first);
    const entry = {
      turnId: "t1",
      submissionId: "s1",
      offset: "0",
      streamUrl: "/x",
      child: "implement#coder",
    };
    await store.save({ ...first, ledger: { "r1/coder": entry }, updatedAt: at(2) });
    await store.save({ ...first, ledger: { "r1/coder": entry }, updatedAt: at(3) });
    expect((await store.versions("r1")).map((v) => v.cause)).toEqual([
      { kind: "start" },
      { kind: "admission", child: "implement#coder", agent: "coder" },
      { kind: "step" },
    ]);
    await store.close();
  });

  it("retention deletes the versions of old settled runs with their log, never a live run's", async () => {
    const store = open();
    await store.save(blob("old", "running", "a", "2026-01-01T00:00:00.000Z"));
    await store.save(blob("old", "done", "b", "2026-01-01T00:00:01.000Z"));
    await store.save(blob("live", "running", "a", "2026-01-01T00:00:00.000Z"));
    await store.save(blob("new", "done", "a", "2026-03-01T00:00:00.000Z"));
    expect(await store.pruneEvents("2026-02-01T00:00:00.000Z")).toBe(2);
    expect(await store.versions("old")).toEqual([]);
    expect(await store.versions("live")).toHaveLength(1);
    expect(await store.versions("new")).toHaveLength(1);
    expect(await store.load("old")).toBeDefined();
    await store.close();
  });
});

describe("JR2_VERSIONS_KEPT", () => {
  it("defaults to 20 and refuses what is not a positive integer, naming it", () => {
    expect(versionsKeptOf({})).toBe(20);
    expect(versionsKeptOf({ JR2_VERSIONS_KEPT: "5" })).toBe(5);
    expect(() => versionsKeptOf({ JR2_VERSIONS_KEPT: "0" })).toThrow(
      /JR2_VERSIONS_KEPT=0 is not a positive integer/,
    );
  });
});
