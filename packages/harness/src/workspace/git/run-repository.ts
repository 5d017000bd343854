import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { basename, dirname, join } from "node:path";
import { Jr2Error } from "@jr2/wire";
import type { SlotPaths } from "../slot-paths.js";
import { type GitPlace, git, gitLine } from "./git-command.js";
import { nestedReposOf } from "./nested-repos.js";
import { writeFileNoFollow } from "./no-symlink.js";

/**
 * Makes the run's own repository for a slot: a git directory that borrows every object of the
 * mirror through `objects/info/alternates` (nothing copied), holds only this run's refs, and
 * has the branch `paths.branch` at `base`. Idempotent: a second call keeps what is there.
 * A new one is written as files, not by `git init` + `update-ref` + `symbolic-ref` (ADR-0218:
 * four git processes were a quarter of an attach); HEAD is written last, so a Harness killed
 * half-way leaves a directory git does not take for a repository, and the next call writes it
 * again.
 */
export async function makeRunRepository(paths: SlotPaths, mirror: string, base: string): Promise<void> {
  const gitDir = paths.repo;
  const fresh = !(await exists(join(gitDir, "HEAD")));
  if (fresh && /^[0-9a-f]{40}$/.test(base)) {
    await writeFreshRepository(paths, mirror, base);
    return;
  }
  if (fresh) {
    await mkdir(dirname(gitDir), { recursive: true });
    await git({}, ["init", "--bare", "--quiet", gitDir]);
  }
  await ownConfig(gitDir);
  await writeFile(join(gitDir, "objects", "info", "alternates"), `${join(mirror, "objects")}\n`);
  const head = await branchHead({ gitDir }, paths.branch);
  if (!head) await git({ gitDir }, ["update-ref", `refs/heads/${paths.branch}`, base]);
  await git({ gitDir }, ["symbolic-ref", "HEAD", `refs/heads/${paths.branch}`]);
}

/**
 * The files `git init --bare` + `update-ref` + `symbolic-ref HEAD` would leave, minus the
 * templates (sample hooks jr2 never runs, a description): `objects/{info,pack}` with the
 * alternates, `refs/{heads,tags}`, the branch as a loose ref (40 hex digits and a newline, git's
 * own format), jr2's config, then HEAD naming the branch. Only for a SHA-1 `base` (a mirror
 * made by `git init`); anything else goes through git.
 */
async function writeFreshRepository(paths: SlotPaths, mirror: string, base: string): Promise<void> {
  const gitDir = paths.repo;
  const ref = join(gitDir, "refs", "heads", ...paths.branch.split("/"));
  await Promise.all([
    mkdir(join(gitDir, "objects", "info"), { recursive: true }),
    mkdir(join(gitDir, "objects", "pack"), { recursive: true }),
    mkdir(join(gitDir, "refs", "tags"), { recursive: true }),
    mkdir(dirname(ref), { recursive: true }),
  ]);
  await Promise.all([
    writeFile(join(gitDir, "objects", "info", "alternates"), `${join(mirror, "objects")}\n`),
    writeFile(ref, `${base}\n`),
    ownConfig(gitDir),
  ]);
  await writeFile(join(gitDir, "HEAD"), `ref: refs/heads/${paths.branch}\n`);
}

/**
 * The run's repository's config, written by jr2 before every operation (issue 28 "no
 * repo-local config that executes anything"): whatever was planted there — an fsmonitor, a
 * filter or textconv driver, an ssh command, `extensions.worktreeConfig` with a
 * `config.worktree` — is gone before git reads it. Not bare: jr2 always passes --work-tree.
 */
export async function ownConfig(gitDir: string): Promise<void> {
  await writeFile(join(gitDir, "config"), RUN_REPOSITORY_CONFIG);
  await rm(join(gitDir, "config.worktree"), { force: true });
}

const RUN_REPOSITORY_CONFIG =
  "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";

/**
 * Checks the branch out into the Worktree: makes the directory, writes the index and files
 * from the branch's commit, and writes the Worktree's `.git` file (for tools that read it;
 * jr2's git never does; written without following a link there, ADR-0227). Files already there
 * and not tracked are left alone; the caller has checked that no folder on the way is a link.
 * The files are written by {@link CHECKOUT_WORKERS} processes at once (git's parallel checkout,
 * ≥ 2.32; an older git ignores the keys), ADR-0218.
 */
export async function checkoutWorktree(paths: SlotPaths): Promise<void> {
  await mkdir(paths.worktree, { recursive: true });
  const place = placeOf(paths);
  await git(place, ["reset", "--hard", "--quiet", `refs/heads/${paths.branch}`], {
    config: [`checkout.workers=${CHECKOUT_WORKERS}`],
  });
  // A tool may have made `.git` a link to any file the Harness can write (ADR-0227): never followed.
  await writeFileNoFollow(join(paths.worktree, ".git"), `gitdir: ${paths.repo}\n`);
}

/**
 * Processes a checkout writes files with: the node's cores, at most 8. git's default is 1;
 * below `checkout.thresholdForParallelism` (100 files) it stays sequential.
 */
export const CHECKOUT_WORKERS = Math.max(1, Math.min(8, availableParallelism()));

/** The commit a branch points at, or undefined when there is no such branch. */
export async function branchHead(place: GitPlace, branch: string): Promise<string | undefined> {
  const { stdout, code } = await git(
    place,
    ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`],
    {
      okCodes: [1],
    },
  );
  return code === 0 ? stdout.trim() : undefined;
}

/**
 * The commit `ref` names in the mirror (a branch, a tag or a commit id), or the mirror's HEAD.
 * @throws Jr2Error `JR2_ERR_WORKSPACE_REF_UNKNOWN` naming the ref and the URL
 */
export async function resolveRef(mirror: string, ref: string | undefined, url: string): Promise<string> {
  const candidates = ref === undefined ? ["HEAD"] : [`refs/heads/${ref}`, `refs/tags/${ref}`, ref];
  for (const c of candidates) {
    if (c.startsWith("-")) break;
    const { stdout, code } = await git(
      { gitDir: mirror },
      ["rev-parse", "--verify", "--quiet", `${c}^{commit}`],
      {
        okCodes: [1, 128],
      },
    );
    if (code === 0) return stdout.trim();
  }
  throw new Jr2Error("JR2_ERR_WORKSPACE_REF_UNKNOWN", { ref: ref ?? "HEAD", url });
}

/** The git place of a slot: its repository and Worktree. */
export function placeOf(paths: SlotPaths): GitPlace {
  return { gitDir: paths.repo, workTree: paths.worktree };
}

/** Identity of the commits jr2 makes for an Agent (issue 28 §3: author `jr2 <agent>`). */
export function authorEnv(agent: string): Record<string, string> {
  const name = `jr2 ${agent}`;
  const email = `${agent.replace(/[^A-Za-z0-9._-]/g, "-") || "agent"}@jr2.invalid`;
  return {
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
  };
}

/**
 * Commits the Worktree if it changed (tracked changes and untracked files not ignored):
 * `add -A` into the index, then `write-tree`/`commit-tree`/`update-ref` with the Agent as
 * author (plumbing: no porcelain `commit` refreshing the index). Nested repositories the tool
 * made are kept out ({@link nestedReposOf}, ADR-0211): jr2's git never enters them and their
 * files are not committed; `skipped` names them. Returns the branch's head after, whether a
 * commit was made, and the skipped paths.
 */
export async function commitWorktree(
  paths: SlotPaths,
  agent: string,
  message: string,
): Promise<{ commit: string; created: boolean; skipped: string[] }> {
  const place = placeOf(paths);
  const nested = await nestedReposOf(paths.worktree);
  await git(place, ["add", "-A", "--", ...nested.pathspec]);
  const head = await gitLine(place, ["rev-parse", "HEAD"]);
  const tree = await gitLine(place, ["write-tree"]);
  const created = tree !== (await gitLine(place, ["rev-parse", "HEAD^{tree}"]));
  let commit = head;
  if (created) {
    commit = await gitLine(place, ["commit-tree", tree, "-p", head, "-F", "-"], {
      env: authorEnv(agent),
      input: message,
    });
    await git(place, ["update-ref", "-m", "jr2: commit", `refs/heads/${paths.branch}`, commit, head]);
  }
  return { commit, created, skipped: nested.paths };
}

/**
 * Saves what a reset or removal would lose (issue 28 §3): tracked changes and untracked files
 * not ignored go into a commit on top of the branch's head, through a private index
 * (`.<slot>.<op>-<n>.index` beside the repository; the Worktree's own index is not touched);
 * the ref `refs/jr2/<runId>/before-<op>-<n>` points at it,
 * or at the head itself when nothing changed, so every commit the branch held stays reachable.
 * Ignored files are not kept, nor nested repositories (never entered, ADR-0211). Returns the ref made.
 */
export async function rescue(paths: SlotPaths, runId: string, op: string, n: number): Promise<string> {
  const place = placeOf(paths);
  const head = await gitLine(place, ["rev-parse", "HEAD"]);
  let keep = head;
  if (await exists(paths.worktree)) {
    // Named for the slot: two slots of one workspace never share it (stale-files.ts removes a stale one).
    const index = join(dirname(paths.repo), `.${basename(paths.repo, ".git")}.${op}-${n}.index`);
    const env = { GIT_INDEX_FILE: index };
    try {
      await git(place, ["read-tree", "HEAD"], { env });
      const nested = await nestedReposOf(paths.worktree);
      await git(place, ["add", "-A", "--", ...nested.pathspec], { env });
      const tree = await gitLine(place, ["write-tree"], { env });
      const headTree = await gitLine(place, ["rev-parse", "HEAD^{tree}"]);
      if (tree !== headTree)
        keep = await gitLine(
          place,
          ["commit-tree", tree, "-p", head, "-m", `jr2: before ${op} ${n} of ${runId}`],
          {
            env: authorEnv("rescue"),
          },
        );
    } finally {
      await rm(index, { force: true });
    }
  }
  const ref = `refs/jr2/${runId}/before-${op}-${n}`;
  await git({ gitDir: paths.repo }, ["update-ref", ref, keep]);
  return ref;
}

/** Whether a path exists (any kind). */
export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
