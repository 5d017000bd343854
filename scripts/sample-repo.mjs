// The quickstart's sample repository for `review` (issue 28): a small git repository and a
// bare remote under <data dir>/repos (a root the Harness lists in JR2_REPO_ROOTS), made once.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const gitEnv = {
  PATH: process.env.PATH,
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "jr2 quickstart",
  GIT_AUTHOR_EMAIL: "quickstart@jr2.invalid",
  GIT_COMMITTER_NAME: "jr2 quickstart",
  GIT_COMMITTER_EMAIL: "quickstart@jr2.invalid",
};

/** Plain git in `cwd` with a fixed identity and no user config. */
export function git(cwd, ...args) {
  return execFileSync("git", args, { cwd, env: gitEnv, encoding: "utf8" }).trim();
}

/**
 * Makes `<root>/sample` (a repository on `main` with a README and hello.js) and
 * `<root>/sample-remote.git` (a bare repository the run's branch is pushed to), if missing.
 * @returns their paths
 */
export function ensureSampleRepo(root) {
  const repo = join(root, "sample");
  const remote = join(root, "sample-remote.git");
  mkdirSync(root, { recursive: true });
  if (!existsSync(join(repo, ".git"))) {
    mkdirSync(repo, { recursive: true });
    git(repo, "init", "--quiet", "--initial-branch=main");
    writeFileSync(
      join(repo, "README.md"),
      "# sample\n\nA small repository the quickstart's coder works on.\n",
    );
    writeFileSync(join(repo, "hello.js"), "// TODO: export hello()\n");
    git(repo, "add", "-A");
    git(repo, "commit", "--quiet", "-m", "sample: README and hello.js");
  }
  if (!existsSync(join(remote, "HEAD")))
    git(root, "init", "--quiet", "--bare", "--initial-branch=main", remote);
  return { repo, remote };
}
