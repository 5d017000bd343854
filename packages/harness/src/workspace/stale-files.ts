import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";

/**
 * What a Harness killed mid-git leaves beside one Repo Slot, removed before this process's first
 * operation on the slot (ADR-0223). git takes `index.lock`, `HEAD.lock`, `config.lock`,
 * `packed-refs.lock` and `refs/…/<ref>.lock` with O_EXCL and deletes them when it ends; a
 * SIGKILLed git leaves them, and every later git of the run that needs the same lock fails
 * ("Unable to create '…/index.lock': File exists") — the run is wedged. Also removed: the
 * rescue's private index and its lock (`.<slot>.<op>-<n>.index[.lock]`, and the per-workspace
 * `.<op>-<n>.index[.lock]` an older Harness named), and the slot record's temporary copies
 * (`<slot>.json.<pid>-<n>.tmp`) another process left (this process's own are live writes).
 *
 * Safe because nothing else runs git in a run's repository: the Orchestrator places a run's
 * workspace on one Harness, the sandbox binds the repository read-only (ADR-0214), and within
 * this process every operation on a slot runs after the previous one ended (slot-queue.ts).
 *
 * @param repos `<workRoot>/.repos`
 * @param key the slot's key `<runId>/<workspace>/<slot>` (each part a valid name: checked here)
 * @returns the paths removed (absolute), for the log line; never throws (a file that cannot be
 *   removed is left for git to name)
 */
export async function removeStaleSlotFiles(repos: string, key: string): Promise<string[]> {
  const parts = key.split("/");
  if (parts.length !== 3 || !parts.every((p) => PART.test(p))) return [];
  const [runId = "", workspace = "", slot = ""] = parts;
  const dir = join(repos, runId, workspace);
  const removed: string[] = [];
  const remove = async (path: string) => {
    try {
      await rm(path);
      removed.push(path);
    } catch {
      // Gone already, or not ours to remove: git names it if it is in the way.
    }
  };
  for (const name of await names(dir)) {
    if (name.startsWith(`${slot}.json.`) && name.endsWith(".tmp") && !name.includes(`.${process.pid}-`))
      await remove(join(dir, name));
    else if (RESCUE_INDEX.exec(name)?.[1] === slot || OLD_RESCUE_INDEX.test(name))
      await remove(join(dir, name));
  }
  removed.push(...(await removeGitLocks(join(dir, `${slot}.git`))));
  return removed;
}

/**
 * The lock files git left in a git directory: its own `*.lock` files (`index.lock`, `HEAD.lock`,
 * `config.lock`, `packed-refs.lock`, `shallow.lock`, …) and every `*.lock` under `refs/` and
 * `logs/`. Only the caller knows whether any is live: it must hold what keeps other jr2 git out
 * (the slot's chain, a mirror's or publish repository's `file-lock.ts` lock).
 */
export async function gitLockFiles(gitDir: string): Promise<string[]> {
  const top = (await names(gitDir)).filter((n) => n.endsWith(".lock")).map((n) => join(gitDir, n));
  return [...top, ...(await locksUnder(join(gitDir, "refs"))), ...(await locksUnder(join(gitDir, "logs")))];
}

/**
 * Removes {@link gitLockFiles} of a git directory whose every jr2 user is shut out by a lock the
 * caller holds (a mirror's, a publish repository's): a SIGKILLed fetch or push left them, and
 * the next one would fail "cannot lock ref". Returns the paths removed; never throws.
 */
export async function removeGitLocks(gitDir: string): Promise<string[]> {
  const removed: string[] = [];
  for (const path of await gitLockFiles(gitDir))
    await rm(path).then(
      () => removed.push(path),
      () => undefined,
    );
  return removed;
}

// A key part as slot-paths.ts makes them: no separator, no leading `.` (so never `..`).
const PART = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
// `.<slot>.<op>-<n>.index[.lock]` (run-repository.ts's rescue), the slot's name captured.
const RESCUE_INDEX = /^\.(.+)\.[a-z]+-\d+\.index(?:\.lock)?$/;
const OLD_RESCUE_INDEX = /^\.[a-z]+-\d+\.index(\.lock)?$/;

async function names(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => [] as string[]);
}

/** Every `*.lock` file under `dir` (refs and reflogs: a few entries per run). */
async function locksUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await locksUnder(path)));
    else if (e.name.endsWith(".lock")) out.push(path);
  }
  return out;
}
