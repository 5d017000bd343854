/**
 * Real git repositories for tests (issue 28: "tests use real repositories made in a temp dir, a
 * real bare repository as the remote"): the user's side of a Repo Slot. Shared by the Harness's
 * workspace tests, the conformance tier and the crash harness's `worktree` phase.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** Plain git for the tests' own repositories (the user's side), with a fixed identity. */
export function userGit(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH,
      HOME: "/nonexistent",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "user",
      GIT_AUTHOR_EMAIL: "user@example.invalid",
      GIT_COMMITTER_NAME: "user",
      GIT_COMMITTER_EMAIL: "user@example.invalid",
    },
  }).trim();
}

/** A temp tree: `repos/` (a listed root) holding `app` (a user's repository), `work/` (the work root), `remote.git`. */
export interface GitFixture {
  dir: string;
  repoRoot: string;
  app: string;
  workRoot: string;
  remote: string;
  /** Writes files into the user's repository and commits them; returns the commit id. */
  commitToApp(files: Record<string, string>, message?: string): string;
  cleanup(): void;
}

/** Makes a {@link GitFixture}: `app` on `main` with README.md and src/index.ts, a bare remote. */
export function makeGitFixture(prefix = "jr2-git-"): GitFixture {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const repoRoot = join(dir, "repos");
  const app = join(repoRoot, "app");
  const workRoot = join(dir, "work");
  const remote = join(repoRoot, "remote.git");
  mkdirSync(app, { recursive: true });
  mkdirSync(workRoot, { recursive: true });
  userGit(app, "init", "--quiet", "--initial-branch=main");
  userGit(dir, "init", "--quiet", "--bare", "--initial-branch=main", remote);
  const commitToApp = (files: Record<string, string>, message = "change") => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(app, path)), { recursive: true });
      writeFileSync(join(app, path), text);
    }
    userGit(app, "add", "-A");
    userGit(app, "commit", "--quiet", "-m", message);
    return userGit(app, "rev-parse", "HEAD");
  };
  commitToApp(
    { "README.md": "# app\n", "src/index.ts": "export const x = 1;\n", ".gitignore": "*.log\n" },
    "initial",
  );
  return {
    dir,
    repoRoot,
    app,
    workRoot,
    remote,
    commitToApp,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
