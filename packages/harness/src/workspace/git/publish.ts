import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Jr2Error } from "@jr2/wire";
import { redactUrl } from "../repo-url.js";
import { removeGitLocks } from "../stale-files.js";
import { credentialEnv, type GitCredentialConfig } from "./credentials.js";
import { withFileLock } from "./file-lock.js";
import { git, gitLine } from "./git-command.js";
import { exists } from "./run-repository.js";

/** What a push left on the remote. */
export interface Pushed {
  branch: string;
  commit: string;
  url: string;
}

/**
 * Pushes a run's branch (issue 28 §5) from a **separate, credential-holding repository**
 * (`<workRoot>/.publish/<sha256(url)[:24]>.git`, never bound into any sandbox) that first
 * *fetches* the branch from the run's repository, so the run's repository — whose Worktree a
 * Working tool wrote — is never the one git pushes from with credentials in its environment.
 * The push is forced onto `refs/heads/<branch>` (jr2's own namespace `jr2/…`: a retry may
 * have reset it). One push per publish repository at a time (file lock).
 * @throws Jr2Error `JR2_ERR_WORKSPACE_PUSH_FAILED` naming the branch, the URL and git's answer
 */
export async function pushBranch(opts: {
  workRoot: string;
  runRepo: string;
  branch: string;
  /** Where to push: the slot's `pushUrl` or `url` (a local path already resolved). */
  url: string;
  /** The mirror's object directory, borrowed so the fetch copies only the run's commits. */
  mirrorObjects?: string;
  credentials: GitCredentialConfig;
  env?: NodeJS.ProcessEnv;
  /** A warn line: the git lock files a killed push left, removed (ADR-0223). */
  warn?: (msg: string, fields?: Record<string, unknown>) => void;
}): Promise<Pushed> {
  const root = join(opts.workRoot, ".publish");
  const dir = join(root, `${createHash("sha256").update(opts.url).digest("hex").slice(0, 24)}.git`);
  await mkdir(root, { recursive: true });
  return withFileLock(`${dir}.lock`, async () => {
    // Under the lock no other jr2 git writes here: a git lock file is a killed fetch's or push's.
    const stale = await removeGitLocks(dir);
    if (stale.length)
      opts.warn?.("removed the git lock files a killed push left in a publish repository (ADR-0223)", {
        repository: dir,
        removed: stale,
      });
    if (!(await exists(join(dir, "HEAD")))) await git({}, ["init", "--bare", "--quiet", dir]);
    if (opts.mirrorObjects)
      await writeFile(join(dir, "objects", "info", "alternates"), `${opts.mirrorObjects}\n`);
    const local = `refs/jr2-publish/${opts.branch}`;
    await git({ gitDir: dir }, [
      "fetch",
      "--quiet",
      "--no-tags",
      "--force",
      "--",
      opts.runRepo,
      `+refs/heads/${opts.branch}:${local}`,
    ]);
    const commit = await gitLine({ gitDir: dir }, ["rev-parse", "--verify", `${local}^{commit}`]);
    try {
      await git(
        { gitDir: dir },
        [
          "push",
          "--quiet",
          "--no-verify",
          "--porcelain",
          "--",
          opts.url,
          `+${commit}:refs/heads/${opts.branch}`,
        ],
        { env: await credentialEnv(opts.credentials, opts.url, opts.env), timeoutMs: 10 * 60_000 },
      );
    } catch (error) {
      throw new Jr2Error(
        "JR2_ERR_WORKSPACE_PUSH_FAILED",
        { branch: opts.branch, url: redactUrl(opts.url), detail: scrub((error as Error).message) },
        error,
      );
    }
    return { branch: opts.branch, commit, url: redactUrl(opts.url) };
  });
}

/** An Authorization header's value never reaches a message. */
function scrub(text: string): string {
  return text.replace(/(Authorization:\s*\w+\s+)\S+/gi, "$1***");
}
