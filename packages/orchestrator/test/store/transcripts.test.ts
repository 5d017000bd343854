/**
 * Turn transcripts in the store (ADR-0257): each transcript row stored once by (run, iid,
 * submission, position) and read per Turn in recording order, a conversation's prefix rows,
 * Turn records replaced by turnId and listed in start order, usage rows naming their Turn, and
 * retention deleting log, transcripts and Turn records of old settled runs together — the
 * SQLite store (also across a reopen) and the memory store alike.
 */
import { TRANSCRIPT_FIELD_CAP_BYTES, type TranscriptEntry } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/durability/store/sqlite.js";
import { capEntry, type TranscriptRow, type TurnRecord } from "../../src/durability/transcript-rows.js";
import { blob, memoryAndSqlite, sqliteDir } from "./store-fixture.js";

const prompt: TranscriptEntry = {
  kind: "message",
  role: "user",
  part: "prompt",
  text: "Review the patch.",
  json: '{"role":"user","content":"Review the patch."}',
};
const prefix: TranscriptEntry = { kind: "prefix", system: "You review.", toolsJson: "[]" };
const answer: TranscriptEntry = {
  kind: "answer",
  model: "m",
  text: "",
  toolCalls: [{ id: "c1", name: "approve", rawArguments: '{"ok":true}', disposition: "pick" }],
  usage: { promptTokens: 100, cachedTokens: 80, completionTokens: 5 },
  finishReason: "tool_calls",
  replayed: true,
};

function row(position: number, entry: TranscriptEntry, turnId = "t1", iid = "r1/reviewer"): TranscriptRow {
  return {
    iid,
    submissionId: "s1",
    position: String(position),
    turnId,
    at: `2026-01-01T00:00:0${position}.000Z`,
    entry,
  };
}
function turn(turnId: string, startedAt: string, patch: Partial<TurnRecord> = {}): TurnRecord {
  return {
    turnId,
    agent: "reviewer",
    state: "reviewing",
    iid: "r1/reviewer",
    startedAt,
    endedAt: null,
    outcome: "running",
    pick: null,
    ...patch,
  };
}

describe.each(memoryAndSqlite)("transcripts in the %s store", (_name, open) => {
  it("keeps each stream position once, in recording order, per Turn; a re-read adds nothing", async () => {
    const store = open();
    await store.recordTranscript("r1", [row(0, prefix), row(1, prompt), row(2, answer)]);
    // A restore's follower reads the same page again, and the next Turn's first entry.
    await store.recordTranscript("r1", [
      row(1, { ...prompt, text: "changed" }),
      row(2, answer),
      row(3, prompt, "t2"),
    ]);
    const t1 = await store.transcript("r1", "t1");
    expect(t1.map((r) => [r.position, r.entry.kind])).toEqual([
      ["0", "prefix"],
      ["1", "message"],
      ["2", "answer"],
    ]);
    expect(t1[1]?.entry).toEqual(prompt);
    expect((await store.transcript("r1", "t2")).map((r) => r.position)).toEqual(["3"]);
    expect(await store.transcript("r2", "t1")).toEqual([]);
    expect((await store.transcriptKeys("r1")).sort()).toEqual(
      ["0", "1", "2", "3"].map((p) => JSON.stringify(["r1/reviewer", "s1", p])),
    );
    expect((await store.prefixes("r1", "r1/reviewer")).map((r) => r.entry)).toEqual([prefix]);
    expect(await store.prefixes("r1", "r1/other")).toEqual([]);
    await store.close();
  });

  it("keeps a capped field's full byte count", async () => {
    const store = open();
    const long = "é".repeat(TRANSCRIPT_FIELD_CAP_BYTES); // 2 bytes each
    const cut = capEntry({ ...prompt, text: long });
    await store.recordTranscript("r1", [{ ...row(1, prompt), ...cut }]);
    const [stored] = await store.transcript("r1", "t1");
    expect(stored?.capped).toEqual({ text: 2 * TRANSCRIPT_FIELD_CAP_BYTES });
    expect(stored?.entry.kind === "message" && stored.entry.text).toBe(
      "é".repeat(TRANSCRIPT_FIELD_CAP_BYTES / 2),
    );
    await store.close();
  });

  it("replaces a Turn record by turnId, keeping start order, and names each usage row's Turn", async () => {
    const store = open();
    await store.recordTurns("r1", [
      turn("t2", "2026-01-01T00:00:05.000Z"),
      turn("t1", "2026-01-01T00:00:01.000Z"),
    ]);
    const ended = turn("t1", "2026-01-01T00:00:01.000Z", {
      endedAt: "2026-01-01T00:00:09.000Z",
      outcome: "picked",
      pick: { name: "approve", arguments: { ok: true } },
    });
    await store.recordTurns("r1", [ended]);
    expect(await store.turns("r1")).toEqual([ended, turn("t2", "2026-01-01T00:00:05.000Z")]);
    const u = {
      iid: "r1/reviewer",
      submissionId: "s1",
      promptTokens: 1,
      cachedTokens: 0,
      completionTokens: 1,
    };
    await store.recordUsage("r1", [
      { ...u, position: "2", turnId: "t1" },
      { ...u, position: "9" },
    ]);
    expect((await store.usage("r1")).map((r) => r.turnId)).toEqual(["t1", undefined]);
    await store.close();
  });

  it("retention deletes log, transcripts and Turn records of old settled runs together, never a live run's", async () => {
    const store = open();
    await store.save(blob("old", "done", "2026-01-01T00:00:00.000Z"));
    await store.save(blob("live", "running", "2026-01-01T00:00:00.000Z"));
    await store.save(blob("new", "done", "2026-06-01T00:00:00.000Z"));
    for (const runId of ["old", "live", "new"]) {
      await store.recordTranscript(runId, [row(1, prompt)]);
      await store.recordTurns(runId, [turn("t1", "2026-01-01T00:00:01.000Z")]);
      await store.appendEvents(runId, [
        { type: "status", status: "running", value: "x", seq: 0, at: "2026-01-01T00:00:00.000Z" },
      ]);
    }
    expect(await store.pruneEvents("2026-03-01T00:00:00.000Z")).toBe(4); // and its version (ADR-0270)
    expect(await store.transcript("old", "t1")).toEqual([]);
    expect(await store.turns("old")).toEqual([]);
    expect(await store.events("old", 0, 10)).toEqual([]);
    for (const runId of ["live", "new"]) {
      expect(await store.transcript(runId, "t1")).toHaveLength(1);
      expect(await store.turns(runId)).toHaveLength(1);
    }
    await store.close();
  });
});

describe("the SQLite store's transcripts", () => {
  it("survive a reopen", async () => {
    const dir = sqliteDir();
    const first = openSqliteStore(dir);
    await first.recordTranscript("r1", [row(1, prompt), row(2, answer)]);
    await first.recordTurns("r1", [turn("t1", "2026-01-01T00:00:01.000Z")]);
    await first.close();
    const again = openSqliteStore(dir);
    expect((await again.transcript("r1", "t1")).map((r) => r.entry)).toEqual([prompt, answer]);
    expect(await again.turns("r1")).toEqual([turn("t1", "2026-01-01T00:00:01.000Z")]);
    await again.close();
  });
});

describe("capEntry", () => {
  it("cuts each text field at the cap on a character boundary and counts its bytes; a short entry is untouched", () => {
    expect(capEntry(answer, 10)).toEqual({
      entry: { ...answer, toolCalls: [{ ...answer.toolCalls[0], rawArguments: '{"ok":true' }] },
      capped: { "toolCalls.0.rawArguments": 11 },
    });
    expect(capEntry({ ...prompt, text: "aé€" }, 4)).toMatchObject({
      entry: { text: "aé" },
      capped: { text: 6 },
    });
    expect(capEntry(prompt)).toEqual({ entry: prompt });
  });
});
