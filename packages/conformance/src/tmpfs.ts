/**
 * A real full disk for the stores' disk-full cases (issue 16 item 1, adversary H3): a small
 * tmpfs mounted for the test (needs root) and a filler that takes it to the last byte. Shared by
 * the Orchestrator's and the Harness's tests, which may both reach @jr2/conformance.
 */
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Mounts a tmpfs of `size` (mount's `size=` option: `1m`, `8m`) on a new directory named
 * `<prefix>…` under the OS temp dir. Undefined when this process is not root or the mount
 * fails — except under `CI=true`, where a root that cannot mount throws (the case must run).
 * The caller unmounts it (`umount`) and removes the directory.
 */
export function mountTmpfs(prefix: string, size: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "pipe" });
    return dir;
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    if (process.env.CI === "true")
      throw new Error(`CI runs as root but cannot mount a tmpfs: ${String(error)}`);
    return undefined;
  }
}

/** Fills the file system holding `dir` to the last byte; returns the filler's path (remove it to free the disk). */
export function fillDisk(dir: string): string {
  const filler = join(dir, "filler");
  const fd = openSync(filler, "w");
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch {
    // ENOSPC: full. Smaller writes take the last partial blocks too.
    try {
      for (;;) writeSync(fd, chunk.subarray(0, 512));
    } catch {}
  } finally {
    closeSync(fd);
  }
  return filler;
}
