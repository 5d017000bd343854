/**
 * Regression (adversary L1, ADR-0177): a 0-byte `harness.sqlite` opened silently as an empty
 * store (a lost state nobody heard of); a file with smashed pages opened fine and failed later,
 * mid-Turn, with "database disk image is malformed" and no path; the file was created 644.
 * Root cause: the open ran no integrity check and said nothing about an empty file. Now the open
 * warns about an empty existing file, runs `PRAGMA quick_check` and refuses a damaged file
 * naming its path and the fix, and creates the file mode 600.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HARNESS_STORE_FILE, openHarnessStore } from "../../src/conversations/store/sqlite-harness-store.js";

let base: string;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "jr2-store-damage-"));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

/** A store of 300 conversations, closed; returns its file. */
function goodStore(dir: string): string {
  const s = openHarnessStore(dir);
  for (let i = 0; i < 300; i++) {
    const iid = `run${i}/a/x`;
    s.create(iid, Date.now());
    s.admit(iid, `sub${i}`, Date.now());
    s.appendMessages(iid, `sub${i}`, 0, [JSON.stringify({ role: "user", content: "x".repeat(500) })]);
  }
  s.close();
  return join(dir, HARNESS_STORE_FILE);
}

describe("the Harness store's file at open", () => {
  it("is created mode 600", () => {
    const file = goodStore(join(base, "data"));
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("warns, naming the file, when an existing file was empty (0 bytes)", () => {
    const dir = join(base, "data");
    const file = goodStore(dir);
    truncateSync(file, 0);
    const warn = vi.fn();
    const s = openHarnessStore(dir, { warn });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining(`${file} was an empty (0-byte) file`), {
      path: file,
    });
    expect(s.unsettled()).toEqual([]);
    s.close();
    // A file the Harness made itself is not "an existing empty file".
    const fresh = vi.fn();
    openHarnessStore(join(base, "fresh"), { warn: fresh }).close();
    expect(fresh).not.toHaveBeenCalled();
  });

  it("refuses a file with smashed pages at start, naming the path and the fix", () => {
    const dir = join(base, "data");
    const file = goodStore(dir);
    const bytes = readFileSync(file);
    for (let i = 8192; i < bytes.length; i += 4096) bytes.fill(0xa5, i, i + 4096);
    writeFileSync(file, bytes);
    expect(() => openHarnessStore(dir)).toThrow(
      new RegExp(`${file.replace(/[.]/g, "\\.")}: the file is damaged \\(quick_check: .*move it aside`, "s"),
    );
  });

  it("opens an intact store as before", () => {
    const dir = join(base, "data");
    goodStore(dir);
    const s = openHarnessStore(dir);
    expect(s.history("run5/a/x")?.submissions).toHaveLength(1);
    expect(s.unsettled()).toHaveLength(300);
    s.close();
  });
});
