/**
 * Usage rows of the store port (ADR-0255): one per (iid, submissionId, stream position), the
 * same for the memory and the SQLite store, whether written on their own or with a save.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore, type RunBlob } from "../../src/durability/store/run-store.js";
import { openSqliteStore } from "../../src/durability/store/sqlite.js";
import { streamPosition, sumUsage, type UsageRecord } from "../../src/durability/usage-totals.js";
import { sqliteDir } from "./store-fixture.js";

const blob: RunBlob = {
  runId: "run-1",
  workflow: "review",
  machineFingerprint: "fp",
  status: "running",
  snapshot: { value: "implement" },
  input: {},
  ledger: {},
  epochs: {},
  timers: [],
  usage: sumUsage([]),
  createdAt: "2026-12-01T00:00:00.000Z",
  updatedAt: "2026-12-01T00:00:00.000Z",
};
const at = (position: string, submissionId = "s1"): UsageRecord => ({
  iid: "run-1/coder",
  submissionId,
  position,
  promptTokens: 100,
  cachedTokens: null,
  completionTokens: 5,
  finishReason: "tool_calls",
});

describe.each([
  ["memory", () => createMemoryStore()],
  [
    "sqlite",
    () => {
      return openSqliteStore(sqliteDir("jr2-usage-rows-"));
    },
  ],
])("usage rows in the %s store", (_kind, open) => {
  it("keeps each stream position once, with its nulls and finish reason, in recording order", async () => {
    const store = open();
    await store.recordUsage("run-1", [at("3"), at("7")]);
    await store.recordUsage("run-1", [at("3")]); // read again after a restart
    await store.save(blob, [], [at("7"), at("9"), at("3", "s2")]);
    expect(await store.usage("run-1")).toEqual([at("3"), at("7"), at("9"), at("3", "s2")]);
    expect(await store.usage("run-2")).toEqual([]);
    expect(sumUsage(await store.usage("run-1"))).toMatchObject({
      promptTokens: 400,
      cachedTokens: null,
      completionTokens: 20,
      requests: 4,
      unreportedRequests: 4,
    });
    await store.close();
  });
});

describe("stream positions (ADR-0255)", () => {
  it("are the same however the stream is paged; an opaque offset keeps its index", () => {
    expect(streamPosition("0", 2)).toBe("2");
    expect(streamPosition("1", 1)).toBe("2");
    expect(streamPosition("c-9f", 1)).toBe("c-9f+1");
  });
});
