/**
 * What the store tests share: a SQLite store's temp directory (removed after each test), the
 * memory and SQLite stores to run one case against each (`describe.each`), and a plain run blob.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { createMemoryStore, type RunBlob, type RunStore } from "../../src/durability/store/run-store.js";
import { openSqliteStore } from "../../src/durability/store/sqlite.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh temp directory named `<prefix>…` for a SQLite store, removed after the test. */
export function sqliteDir(prefix = "jr2-store-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** `[name, open]` of a fresh memory store and a fresh SQLite store (in a `sqliteDir`). */
export const memoryAndSqlite: Array<[string, () => RunStore]> = [
  ["memory", () => createMemoryStore()],
  ["sqlite", () => openSqliteStore(sqliteDir())],
];

/** A run `runId` of workflow `w` in `status` (value `x`, nothing ledgered, no usage), saved at `updatedAt`. */
export function blob(
  runId: string,
  status: RunBlob["status"],
  updatedAt = "2026-01-01T00:00:00.000Z",
): RunBlob {
  return {
    runId,
    workflow: "w",
    machineFingerprint: "f",
    status,
    snapshot: { value: "x" },
    input: null,
    ledger: {},
    epochs: {},
    timers: [],
    usage: { promptTokens: null, cachedTokens: null, completionTokens: null },
    createdAt: updatedAt,
    updatedAt,
  };
}
