import { git } from "./git-command.js";

/** One commit of a run's branch, newest first. */
export interface BranchCommit {
  commit: string;
  author: string;
  subject: string;
  /** Author date, ISO-8601 strict. */
  time: string;
}

/**
 * The commits `base..head` of a run's repository, newest first, at most `max` of them, and how
 * many there are in all (ADR-0225: the branch view shows the newest and counts the rest).
 */
export async function branchLog(
  repo: string,
  base: string,
  head: string,
  max = 100,
): Promise<{ commits: BranchCommit[]; total: number }> {
  const range = `${base}..${head}`;
  const [{ stdout }, { stdout: count }] = await Promise.all([
    git({ gitDir: repo }, ["log", "-z", `--max-count=${max}`, "--format=%H%x1f%an%x1f%aI%x1f%s", range]),
    git({ gitDir: repo }, ["rev-list", "--count", range]),
  ]);
  const commits = stdout
    .split("\0")
    .filter(Boolean)
    .map((line) => {
      const [commit = "", author = "", time = "", subject = ""] = line.replace(/^\n/, "").split("\x1f");
      return { commit, author, subject, time };
    });
  return { commits, total: Number(count.trim()) || commits.length };
}

/**
 * The branch or tag a slot's base came from: the slot's `ref` when it names a branch or tag of
 * the mirror, else — no `ref` — the remote's default branch (the mirror's HEAD); undefined for
 * a bare commit, a mirror gone, or none (`mirror` undefined: the URL no longer accepted). For the forge link and the publish hook's `JR2_BASE`.
 */
export async function baseRefOf(
  mirror: string | undefined,
  ref: string | undefined,
): Promise<string | undefined> {
  if (mirror === undefined) return undefined;
  if (ref !== undefined) {
    if (ref.startsWith("-")) return undefined;
    for (const full of [`refs/heads/${ref}`, `refs/tags/${ref}`]) {
      const { code } = await git({ gitDir: mirror }, ["show-ref", "--verify", "--quiet", full], {
        okCodes: [1, 128],
      });
      if (code === 0) return ref;
    }
    return undefined;
  }
  const { stdout, code } = await git({ gitDir: mirror }, ["symbolic-ref", "--quiet", "HEAD"], {
    okCodes: [1, 128],
  });
  return code === 0 ? stdout.trim().replace(/^refs\/heads\//, "") || undefined : undefined;
}
