import { open, readFile, rm, stat } from "node:fs/promises";
import { Jr2Error } from "@jr2/wire";

/**
 * Holds an exclusive lock file for `fn`'s duration, across processes on one node (two Harness
 * processes may share a work root). The lock is a file made with O_EXCL holding the owner's
 * pid; a lock whose pid is dead, or is this process's own pid while this process does not hold
 * it (a restarted container's Harness often gets its killed predecessor's pid), or older than
 * `staleMs`, is taken over (a Harness SIGKILLed mid-fetch must not wedge the mirror). Waiters
 * poll every `pollMs`.
 * @throws Jr2Error `JR2_ERR_WORKSPACE_LOCK_TIMEOUT` naming the lock after `waitMs`
 */
export async function withFileLock<T>(
  lockPath: string,
  fn: () => Promise<T>,
  opts: { waitMs?: number; staleMs?: number; pollMs?: number } = {},
): Promise<T> {
  const waitMs = opts.waitMs ?? 10 * 60_000;
  const staleMs = opts.staleMs ?? 15 * 60_000;
  const pollMs = opts.pollMs ?? 50;
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const handle = await open(lockPath, "wx");
      held.add(lockPath);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (await stale(lockPath, staleMs)) {
        await rm(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new Jr2Error("JR2_ERR_WORKSPACE_LOCK_TIMEOUT", { lock: lockPath, waitedMs: waitMs });
      }
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockPath, { force: true });
    held.delete(lockPath);
  }
}

/** The lock files this process holds now: a lock naming this pid and not among them is a dead predecessor's. */
const held = new Set<string>();

async function stale(lockPath: string, staleMs: number): Promise<boolean> {
  try {
    const [text, info] = await Promise.all([readFile(lockPath, "utf8"), stat(lockPath)]);
    if (Date.now() - info.mtimeMs > staleMs) return true;
    const pid = Number(text);
    if (!Number.isSafeInteger(pid) || pid <= 0) return Date.now() - info.mtimeMs > 5_000;
    // A restarted container's Harness often has its killed predecessor's pid: ours, not held by us.
    if (pid === process.pid) return !held.has(lockPath);
    try {
      process.kill(pid, 0);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ESRCH";
    }
  } catch {
    return false;
  }
}
