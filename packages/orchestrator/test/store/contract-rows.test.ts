/**
 * The store contract (SPEC §8, ADR-0280), the rows a run's saves keep: the blob byte for byte,
 * pick answers, usage, events, transcripts and Turn records (those a save carries in its own
 * transaction too), each once by its key — and a save
 * with a part that cannot be stored commits nothing. The same cases against memory, SQLite and
 * PostgreSQL (contract-stores.ts).
 */
import type { RunFeedEvent } from "@jr2/wire";
import { expect, it } from "vitest";
import { answer, blob, eachStore, event, row, type Subject, turn, usageRecord } from "./contract-stores.js";

function rowCases(subject: Subject) {
  it("saves a blob and loads it back byte for byte (unicode, escapes, key order)", async () => {
    const store = await subject.open();
    const odd = blob("r1", {
      input: {
        z: 1,
        a: 'é — 🚀 \u2028 \u0000 \ud800 "q" \\',
        big: 1e21,
        neg: -3.5,
        nested: [{ b: null, a: [] }],
      },
    });
    await store.save(odd);
    expect(JSON.stringify(await store.load("r1"))).toBe(JSON.stringify(odd));
    expect(await store.load("missing")).toBeUndefined();
    await store.close();
  });

  it("keeps pick answers once by (iid, turnId, toolCallId); without a turnId the newest answer of any Turn", async () => {
    const store = await subject.open();
    const pick = (turnId: string | null, scope: string) => ({
      iid: "r1/coder",
      turnId,
      toolCallId: "call_1",
      scope,
      answer,
    });
    await store.save(blob("r1"), [pick("t1", "instance")]);
    await store.save(blob("r1"), [pick("t1", "other"), pick("t2", "sandbox:a")]);
    expect(await store.pickAnswer("r1", { iid: "r1/coder", turnId: "t1", toolCallId: "call_1" })).toEqual(
      pick("t1", "instance"),
    );
    expect(await store.pickAnswer("r1", { iid: "r1/coder", toolCallId: "call_1" })).toEqual(
      pick("t2", "sandbox:a"),
    );
    expect(
      await store.pickAnswer("r1", { iid: "r1/coder", turnId: "t3", toolCallId: "call_1" }),
    ).toBeUndefined();
    expect(await store.pickAnswer("r2", { iid: "r1/coder", toolCallId: "call_1" })).toBeUndefined();
    await store.save(blob("r3"), [{ ...pick(null, "instance"), iid: "r3/coder" }]);
    expect(await store.pickAnswer("r3", { iid: "r3/coder", toolCallId: "call_1" })).toEqual({
      ...pick(null, "instance"),
      iid: "r3/coder",
    });
    await store.close();
  });

  it("records usage once by (iid, submissionId, position), in recording order", async () => {
    const store = await subject.open();
    await store.save(blob("r1"), [], [usageRecord("1", { finishReason: "stop", turnId: "t1" })]);
    await store.recordUsage("r1", [
      usageRecord("1", { promptTokens: 999 }),
      usageRecord("0"),
      usageRecord("2"),
    ]);
    await store.recordUsage("r1", [usageRecord("0", { promptTokens: 5 })]);
    expect(await store.usage("r1")).toEqual([
      usageRecord("1", { finishReason: "stop", turnId: "t1" }),
      usageRecord("0"),
      usageRecord("2"),
    ]);
    expect(await store.usage("none")).toEqual([]);
    await store.close();
  });

  it("keeps events once by seq, pages them in seq order and knows the last seq", async () => {
    const store = await subject.open();
    expect(await store.lastEventSeq("r1")).toBeUndefined();
    await store.save(blob("r1"), [], [], [event(0), event(1)]);
    await store.appendEvents("r1", [event(3), event(2), event(1, "again")]);
    await store.appendEvents("r1", []);
    expect(await store.events("r1", 0, 100)).toEqual([event(0), event(1), event(2), event(3)]);
    expect(await store.events("r1", 1, 2)).toEqual([event(1), event(2)]);
    expect(await store.events("r1", 4, 10)).toEqual([]);
    expect(await store.events("r1", 0, 0)).toEqual([]);
    expect(await store.lastEventSeq("r1")).toBe(3);
    await store.appendEvents("never-saved", [event(7)]);
    expect(await store.lastEventSeq("never-saved")).toBe(7);
    await store.close();
  });

  it("records transcripts once by key and Turn records by turnId, keeping their place", async () => {
    const store = await subject.open();
    const prefix = row("0", "t1", { entry: { kind: "prefix", system: "sys", toolsJson: "[]" } });
    await store.recordTranscript("r1", [prefix, row("1", "t1"), row("2", "t2")]);
    await store.recordTranscript("r1", [
      row("1", "t1", { at: "changed" }),
      row("3", "t1", { capped: { text: 70000 } }),
    ]);
    expect(await store.transcript("r1", "t1")).toEqual([
      prefix,
      row("1", "t1"),
      row("3", "t1", { capped: { text: 70000 } }),
    ]);
    expect(await store.prefixes("r1", "r1/coder")).toEqual([]);
    expect(await store.prefixes("r1", "r/coder")).toEqual([prefix]);
    expect(await store.transcriptKeys("r1")).toEqual(
      ["0", "1", "2", "3"].map((p) => JSON.stringify(["r/coder", "s1", p])),
    );
    await store.recordTurns("r1", [
      turn("t2", "2026-11-30T00:00:05.000Z"),
      turn("t1", "2026-11-30T00:00:01.000Z"),
    ]);
    await store.recordTurns("r1", [turn("t3", "2026-11-30T00:00:05.000Z")]);
    await store.recordTurns("r1", [
      turn("t2", "2026-11-30T00:00:05.000Z", { outcome: "picked", endedAt: "x" }),
    ]);
    expect((await store.turns("r1")).map((t) => [t.turnId, t.outcome])).toEqual([
      ["t1", "running"],
      ["t2", "picked"],
      ["t3", "running"],
    ]);
    expect(await store.turns("none")).toEqual([]);
    await store.close();
  });

  it("writes the Turn record a pick's save carries with it, and a picked Turn stays picked", async () => {
    const store = await subject.open();
    const ended = turn("t1", "2026-11-30T00:00:01.000Z", { outcome: "left", endedAt: "x" });
    await store.recordTurns("r1", [ended]);
    const picked = { ...ended, outcome: "picked" as const, pick: { name: "finish", arguments: { n: 1 } } };
    const pick = { iid: "r1/coder", turnId: "t1", toolCallId: "c", scope: "instance", answer };
    await store.save(blob("r1"), [{ ...pick, turn: picked }]);
    expect(await store.turns("r1")).toEqual([picked]);
    // Its state's exit queued `left` (no pick) before the save; that write landing late undoes nothing.
    await store.recordTurns("r1", [ended, turn("t2", "2026-11-30T00:00:02.000Z")]);
    expect((await store.turns("r1")).map((t) => [t.turnId, t.outcome, t.pick?.name])).toEqual([
      ["t1", "picked", "finish"],
      ["t2", "running", undefined],
    ]);
    // The answer is stored as before, without the record.
    expect(await store.pickAnswer("r1", { iid: "r1/coder", turnId: "t1", toolCallId: "c" })).toEqual(pick);
    await store.close();
  });

  it("writes the Turn records a save carries in its transaction, then its picks' (ADR-0296)", async () => {
    const store = await subject.open();
    // A pick's cascade: its Turn's state exited (`left`) and the next Turn registered.
    const left = turn("t1", "2026-11-30T00:00:01.000Z", { outcome: "left", endedAt: "x" });
    const next = turn("t2", "2026-11-30T00:00:02.000Z");
    const picked = { ...left, outcome: "picked" as const, pick: { name: "finish", arguments: {} } };
    const pick = { iid: "r1/coder", turnId: "t1", toolCallId: "c", scope: "instance", answer, turn: picked };
    await store.save(blob("r1"), [pick], [], [], undefined, undefined, [left, next]);
    expect((await store.turns("r1")).map((t) => [t.turnId, t.outcome, t.pick?.name])).toEqual([
      ["t1", "picked", "finish"],
      ["t2", "running", undefined],
    ]);
    await store.close();
  });

  it("commits nothing of a save when a part of it cannot be stored", async () => {
    const store = await subject.open();
    const cyclic: Record<string, unknown> = { ...event(0) };
    cyclic.self = cyclic;
    await expect(
      store.save(
        blob("r1"),
        [{ iid: "r1/coder", turnId: "t1", toolCallId: "c", scope: "instance", answer }],
        [usageRecord("0")],
        [event(1), cyclic as unknown as RunFeedEvent],
        undefined,
        undefined,
        [turn("t1", "2026-11-30T00:00:01.000Z")],
      ),
    ).rejects.toThrow();
    expect(await store.turns("r1")).toEqual([]);
    expect(await store.load("r1")).toBeUndefined();
    expect(await store.pickAnswer("r1", { iid: "r1/coder", toolCallId: "c" })).toBeUndefined();
    expect(await store.usage("r1")).toEqual([]);
    expect(await store.lastEventSeq("r1")).toBeUndefined();
    expect(await store.versions("r1")).toEqual([]);
    expect(await store.list()).toEqual([]);
    // The store still works after the failed save.
    await store.save(blob("r1"));
    expect(await store.load("r1")).toEqual(blob("r1"));
    await store.close();
  });
}

eachStore("rows", rowCases);
