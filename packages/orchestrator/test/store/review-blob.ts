/**
 * The running `review` run the store suites save (memory, SQLite and PostgreSQL alike): the one
 * blob literal that pg-store-fixture.ts, contract-stores.ts and sqlite.test.ts build theirs on.
 */
import type { RunBlob } from "../../src/durability/store/run-store.js";

/** A running run `runId` of workflow `review` in `implement` (no input, nothing ledgered), `patch` over it. */
export function reviewBlob(runId: string, patch: Partial<RunBlob> = {}): RunBlob {
  return {
    runId,
    workflow: "review",
    machineFingerprint: "fp1",
    status: "running",
    snapshot: { value: "implement", context: {} },
    input: {},
    ledger: {},
    epochs: {},
    timers: [],
    usage: { promptTokens: 0, cachedTokens: 0, completionTokens: 0 },
    createdAt: "2026-11-30T00:00:00.000Z",
    updatedAt: "2026-11-30T00:00:00.000Z",
    ...patch,
  };
}
