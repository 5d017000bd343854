import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

/**
 * Nested repositories in a Worktree, kept out of every jr2 git call that walks it (ADR-0211).
 *
 * Why: a Working tool can `git init sub/` inside the Worktree and plant `filter.*.process`,
 * `core.fsmonitor` or hooks in `sub/.git/config`. When jr2's git meets an embedded repository
 * it may run `git status` *inside* it (to tell whether the gitlink changed) — and that child
 * git reads the planted config, outside the sandbox, as the Harness's user. `-c` options do not
 * reach the child (git clears `GIT_CONFIG_PARAMETERS` for a submodule's process). So jr2 never
 * lets its git enter one: each is excluded by a `:(exclude,literal)` pathspec, with which git
 * neither opens nor stats anything below it (checked with strace; an excludes file as well made
 * `git add` fail with "paths are ignored", so there is none).
 */
export interface NestedRepos {
  /** Worktree-relative paths (POSIX separators) of directories holding a `.git` entry, sorted. */
  paths: string[];
  /** Pathspec arguments to put after `--`: `.` then one `:(exclude,literal)<path>` per nested repository. */
  pathspec: string[];
}

/**
 * Walks `worktree` without following symlinks and returns every directory below the top level
 * that holds an entry named `.git` (a directory, a `gitdir:` file or a symlink: git treats all
 * three as a repository). The walk does not descend into a nested repository (all of it is
 * excluded) nor through a symlink (git stores a symlink as a link and never enters it).
 * The top level's own `.git` (jr2's `gitdir:` file) is not a nested repository.
 * A missing Worktree has none.
 */
export async function findNestedRepos(worktree: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return; // gone or unreadable: git will not enter it either
    }
    if (rel !== "" && entries.some((e) => e.name === ".git")) {
      found.push(rel);
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory() || e.name === ".git") continue; // Dirent does not follow symlinks
      await walk(join(dir, e.name), rel === "" ? e.name : `${rel}/${e.name}`);
    }
  };
  try {
    if (!(await lstat(worktree)).isDirectory()) return found;
  } catch {
    return found;
  }
  await walk(worktree, "");
  return found.sort();
}

/** The nested repositories of `worktree` and the pathspec that keeps them out; call right before the git call that walks it. */
export async function nestedReposOf(worktree: string): Promise<NestedRepos> {
  const paths = await findNestedRepos(worktree);
  return { paths, pathspec: [".", ...paths.map((p) => `:(exclude,literal)${p}`)] };
}
