import type { SandboxUser } from "./spec.js";

/** The uid/gid a sandbox runs as when the Harness is root: the Harness image's `jr2` user. */
export const DEFAULT_SANDBOX_UID = 10001;

/**
 * Who a sandbox runs as: the Harness's own uid/gid when it is not root (the image runs as
 * 10001), else {@link DEFAULT_SANDBOX_UID} — bwrap is then started with that uid, so the
 * sandbox never holds root's kernel identity (root is exempt from RLIMIT_NPROC, and owns the
 * host's files) even on a CI machine that runs everything as root. The run's directory must be
 * writable by that uid for `write` access ({@link ownForSandbox}).
 */
export function sandboxUser(): SandboxUser {
  const uid = process.getuid?.() ?? DEFAULT_SANDBOX_UID;
  const gid = process.getgid?.() ?? DEFAULT_SANDBOX_UID;
  return uid === 0 ? { uid: DEFAULT_SANDBOX_UID, gid: DEFAULT_SANDBOX_UID } : { uid, gid };
}

/**
 * Makes `dir` and everything below it owned by `user` (when the Harness runs as root and the
 * sandbox as {@link DEFAULT_SANDBOX_UID}; a no-op otherwise). Symbolic links are re-owned, never
 * followed.
 */
export async function ownForSandbox(dir: string, user: SandboxUser = sandboxUser()): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const { lchown, readdir } = await import("node:fs/promises");
  const { join } = await import("node:path");
  await lchown(dir, user.uid, user.gid);
  for (const entry of await readdir(dir, { recursive: true })) {
    await lchown(join(dir, entry), user.uid, user.gid);
  }
}
