import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces, type Workspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture, userGit } from "../workspace/git-fixture.js";

/**
 * The adversary's HIGH finding (ADR-0211), as escape-suite cases: a Working tool (which can
 * write anything in its Worktree) runs `git init sub/`, commits there, and plants a filter
 * process, a clean filter, a textconv, an fsmonitor and a hooks path in `sub/.git/config`
 * with `* filter=evil diff=evil` in `sub/.gitattributes`. Before the fix, jr2's `add -A` on the
 * next pick (and a rescue's) ran `git status` inside `sub/`, which ran the filter as the
 * Harness's user outside the sandbox. Each plant writes a marker; the marker must never appear,
 * on commit, diff, retry (rescue + reset + clean) and removal (rescue).
 */
let fx: GitFixture;
let ws: Workspaces;
const slot = { runId: "run-1", workflow: "review", workspace: "main", slot: "app" };

beforeEach(() => {
  fx = makeGitFixture();
  ws = createWorkspaces(
    readWorkspaceConfig({ JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot, JR2_MIRROR_FETCH_S: "0" }),
  );
});
afterEach(() => fx.cleanup());

/**
 * A non-bare repository at `dir` with a committed file `f` (or, with `from`, a clone of
 * `from.url` at `from.commit`, as a tool checking out a submodule by hand would make), every way
 * to run a program planted, and the file then changed (its index entry stale).
 */
function plantNestedRepo(dir: string, marker: string, from?: { url: string; commit: string }): void {
  mkdirSync(dir, { recursive: true });
  if (from) {
    userGit(dir, "clone", "--quiet", from.url, ".");
    userGit(dir, "checkout", "--quiet", from.commit);
  } else userGit(dir, "init", "--quiet");
  writeFileSync(join(dir, "f"), "x\n");
  userGit(dir, "add", "f");
  userGit(dir, "commit", "--quiet", "-m", "x");
  if (from) userGit(dir, "reset", "--quiet", "--soft", from.commit); // HEAD at the pinned commit, f staged
  const script = join(fx.dir, "evil.sh");
  writeFileSync(script, `#!/bin/sh\necho "$0 $*" >> '${marker}'\ncat\n`);
  chmodSync(script, 0o755);
  const hooks = join(fx.dir, "hooks");
  mkdirSync(hooks, { recursive: true });
  for (const h of ["pre-commit", "post-index-change", "post-checkout"]) {
    writeFileSync(join(hooks, h), `#!/bin/sh\necho hook >> '${marker}'\n`);
    chmodSync(join(hooks, h), 0o755);
  }
  const gitDir = userGit(dir, "rev-parse", "--absolute-git-dir");
  writeFileSync(
    join(gitDir, "config"),
    `${readFileSync(join(gitDir, "config"), "utf8")}[core]\n\tfsmonitor = ${script}\n\thooksPath = ${hooks}\n` +
      `[filter "evil"]\n\tprocess = "sh -c 'id > ${marker}.process'; false"\n\tclean = ${script}\n\tsmudge = ${script}\n` +
      `[diff "evil"]\n\ttextconv = ${script}\n`,
  );
  writeFileSync(join(dir, ".gitattributes"), "* filter=evil diff=evil\n");
  writeFileSync(join(dir, "f"), "changed by the tool\n");
  const later = new Date(Date.now() + 2000);
  utimesSync(join(dir, "f"), later, later);
}

function markers(marker: string): string[] {
  return [marker, `${marker}.process`].filter((m) => existsSync(m));
}

describe("git escapes: a nested repository in the Worktree never runs anything", () => {
  it("nested repos (a `git init` subfolder, a deep one, a `.git` file pointing elsewhere, one at a tracked gitlink path, one behind a symlink) run nothing on commit, diff, retry and removal; their files are not committed and stay in the Worktree", async () => {
    // The user's repository carries a submodule gitlink (its directory is empty in a checkout).
    const sha = userGit(fx.app, "rev-parse", "HEAD");
    userGit(fx.app, "update-index", "--add", "--cacheinfo", `160000,${sha},vendor/lib`);
    userGit(fx.app, "commit", "--quiet", "-m", "submodule");
    const h = await ws.attach({ ...slot, url: fx.app });
    const marker = join(fx.dir, "nested-ran");
    plantNestedRepo(join(h.path, "sub"), marker);
    plantNestedRepo(join(h.path, "deep", "a", "b"), marker);
    plantNestedRepo(join(h.path, "vendor", "lib"), marker);
    // A `.git` file in a subdir naming a git directory elsewhere (a planted repository).
    const elsewhere = join(fx.dir, "elsewhere");
    plantNestedRepo(elsewhere, marker);
    mkdirSync(join(h.path, "gitfile"));
    writeFileSync(join(h.path, "gitfile", ".git"), `gitdir: ${join(elsewhere, ".git")}\n`);
    writeFileSync(join(h.path, "gitfile", "f"), "changed\n");
    writeFileSync(join(h.path, "gitfile", ".gitattributes"), "* filter=evil\n");
    // A symlinked directory: to a planted repository outside the Worktree, and to `sub`.
    symlinkSync(elsewhere, join(h.path, "outside-link"));
    symlinkSync("sub", join(h.path, "sub-link"));
    writeFileSync(join(h.path, "change.txt"), "the pick's own work\n");

    const first = await ws.commit({ ...slot, agent: "coder", state: "s", pick: "submit" });
    expect(markers(marker)).toEqual([]);
    // The adversary's second pick: the nested repository changed again.
    writeFileSync(join(h.path, "sub", "f"), "y\n");
    writeFileSync(join(h.path, "change.txt"), "pick two\n");
    const second = await ws.commit({ ...slot, agent: "coder", state: "s", pick: "submit" });
    expect(second.created).toBe(true);
    await ws.diff(slot);
    expect(markers(marker)).toEqual([]);
    expect(first.created).toBe(true);
    expect(first.skipped).toEqual(["deep/a/b", "gitfile", "sub", "vendor/lib"]);
    const repo = (await ws.record(slot))?.repo as string;
    const tree = userGit(repo, "ls-tree", "-r", first.commit);
    expect(tree).toContain("\tchange.txt");
    expect(tree).not.toMatch(/\t(sub|deep|gitfile)(\/|$)/m);
    // The submodule's gitlink stays as the user's repository had it; the symlinks are links.
    expect(tree).toContain(`160000 commit ${sha}\tvendor/lib`);
    expect(tree).toMatch(/^120000 blob \S+\toutside-link$/m);
    expect(tree).toMatch(/^120000 blob \S+\tsub-link$/m);

    await ws.checkoutAt({ ...slot, commit: first.commit }); // rescue, reset --hard, clean
    expect(markers(marker)).toEqual([]);
    // The tool's nested repository survives a retry (not cleaned away, not committed).
    expect(readFileSync(join(h.path, "sub", "f"), "utf8")).toBe("y\n");
    expect(readFileSync(join(h.path, "change.txt"), "utf8")).toBe("the pick's own work\n");
    await ws.remove({ runId: slot.runId }); // rescue before removal
    expect(markers(marker)).toEqual([]);
  });

  it("a rescue alone (retry, then removal) runs nothing from a nested repository at a gitlink the branch already tracks", async () => {
    const sha = userGit(fx.app, "rev-parse", "HEAD");
    userGit(fx.app, "update-index", "--add", "--cacheinfo", `160000,${sha},vendor/lib`);
    userGit(fx.app, "commit", "--quiet", "-m", "submodule");
    const h = await ws.attach({ ...slot, url: fx.app });
    const marker = join(fx.dir, "rescue-ran");
    // The tool checks the submodule out by hand at the commit the gitlink pins: git then asks it for its status.
    plantNestedRepo(join(h.path, "vendor", "lib"), marker, { url: fx.app, commit: sha });
    writeFileSync(join(h.path, "unsaved.txt"), "work a retry must not lose\n");
    await ws.checkoutAt({ ...slot, commit: h.commit });
    expect(markers(marker)).toEqual([]);
    // The rescue kept the unsaved file, not the nested repository's.
    const repo = (await ws.record(slot))?.repo as string;
    const kept = userGit(repo, "ls-tree", "-r", "--name-only", "refs/jr2/run-1/before-retry-1");
    expect(kept.split("\n")).toContain("unsaved.txt");
    expect(kept).not.toContain("vendor/lib/f");
    await ws.remove({ runId: slot.runId });
    expect(markers(marker)).toEqual([]);
  });

  it("the adversary's flow (adv/commit-escape.mjs): planted from inside real bubblewrap, then two picks and a retry, runs nothing", async () => {
    const h = await ws.attach({ ...slot, url: fx.app });
    const run = join(fx.workRoot, slot.runId);
    const pwned = join(fx.dir, "PWNED-outside-sandbox");
    const plant = `set -e; cd '${h.path}'; mkdir sub; cd sub; git init -q; echo x > f; git add f
git -c user.name=x -c user.email=x@x commit -qm x
printf '[filter "evil"]\\n\\tprocess = "sh -c \\\\"id > ${pwned}\\\\"; false"\\n' >> .git/config
echo '* filter=evil' > .gitattributes`;
    execFileSync(
      "/usr/bin/bwrap",
      [
        ...[
          "--unshare-all",
          "--die-with-parent",
          "--ro-bind",
          "/usr",
          "/usr",
          "--symlink",
          "usr/bin",
          "/bin",
        ],
        ...["--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--ro-bind", "/etc", "/etc"],
        ...[
          "--dev",
          "/dev",
          "--proc",
          "/proc",
          "--tmpfs",
          "/tmp",
          "--bind",
          run,
          run,
          "--setenv",
          "HOME",
          "/tmp",
        ],
        ...["sh", "-c", plant],
      ],
      { encoding: "utf8" },
    );
    expect(readFileSync(join(h.path, "sub", ".git", "config"), "utf8")).toContain(pwned); // the plant is there
    const first = await ws.commit({ ...slot, agent: "coder", state: "s", pick: "one" });
    writeFileSync(join(h.path, "sub", "f"), "y\n");
    await ws.commit({ ...slot, agent: "coder", state: "s", pick: "two" });
    await ws.diff(slot);
    await ws.checkoutAt({ ...slot, commit: first.commit });
    expect(existsSync(pwned)).toBe(false);
  });
});
