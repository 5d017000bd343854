/** ADR-0280 "SQLite is single-writer": the data-dir lock, in one process (the kernel's release on death is the integration test's). */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LOCK_FILE, lockDataDir } from "../../src/durability/store/data-dir-lock.js";
import { sqliteDir } from "./store-fixture.js";

const freshDir = () => join(sqliteDir("jr2-lock-"), "data");

describe("the data-dir lock", () => {
  it("refuses a second holder naming the first's pid, host and the lock's path, and what to do", () => {
    const dir = freshDir();
    const first = lockDataDir(dir, { pid: 4242, host: "box-a", since: "2026-12-01T10:00:00.000Z" });
    expect(first.path).toBe(join(dir, LOCK_FILE));
    let message = "";
    try {
      lockDataDir(dir);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(`the data dir ${dir} is in use by another jr2 serve`);
    expect(message).toContain("pid 4242 on host box-a");
    expect(message).toContain(join(dir, LOCK_FILE));
    expect(message).toContain("JR2_DATA_DIR");
    first.release();
  });

  it("is taken again once released, and other data dirs are not affected", () => {
    const dir = freshDir();
    const other = lockDataDir(freshDir());
    lockDataDir(dir).release();
    const again = lockDataDir(dir);
    again.release();
    again.release();
    other.release();
  });
});
