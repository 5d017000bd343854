import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces, type Workspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture, userGit } from "./git-fixture.js";

let fx: GitFixture;
let ws: Workspaces;
const slot = (runId: string) => ({ runId, workflow: "review", workspace: "main", slot: "app" });

function make(env: Record<string, string> = {}): Workspaces {
  return createWorkspaces(
    readWorkspaceConfig({
      JR2_WORK_ROOT: fx.workRoot,
      JR2_REPO_ROOTS: fx.repoRoot,
      JR2_MIRROR_FETCH_S: "0",
      ...env,
    }),
  );
}

beforeEach(() => {
  fx = makeGitFixture();
  ws = make();
});
afterEach(() => fx.cleanup());

describe("attaching a Repo Slot (issue 28 §2)", () => {
  it("checks the remote's HEAD out into <work root>/<runId>/<workspace>/<slot> on jr2/<workflow>/<runId>", async () => {
    const head = userGit(fx.app, "rev-parse", "HEAD");
    const h = await ws.attach({ ...slot("run-1"), url: fx.app });
    expect(h).toEqual({
      path: join(fx.workRoot, "run-1", "main", "app"),
      branch: "jr2/review/run-1",
      base: head,
      commit: head,
    });
    expect(readFileSync(join(h.path, "src/index.ts"), "utf8")).toBe("export const x = 1;\n");
    const r = await ws.record(slot("run-1"));
    // Objects borrowed from the mirror, none copied; only this run's branch as a ref.
    expect(readFileSync(join(r!.repo, "objects/info/alternates"), "utf8")).toContain(
      join(fx.workRoot, ".mirrors"),
    );
    expect(userGit(r!.repo, "count-objects", "-v")).toMatch(/^count: 0$/m);
    expect(userGit(r!.repo, "for-each-ref", "--format=%(refname)")).toBe("refs/heads/jr2/review/run-1");
  });

  it("starts from a named ref, and refuses one the remote lacks naming it", async () => {
    const first = userGit(fx.app, "rev-parse", "HEAD");
    fx.commitToApp({ "later.txt": "later\n" });
    userGit(fx.app, "tag", "v1", first);
    const h = await ws.attach({ ...slot("run-1"), url: fx.app, ref: "v1" });
    expect(h.base).toBe(first);
    expect(existsSync(join(h.path, "later.txt"))).toBe(false);
    await expect(ws.attach({ ...slot("run-2"), url: fx.app, ref: "nope" })).rejects.toMatchObject({
      code: "JR2_ERR_WORKSPACE_REF_UNKNOWN",
      fields: { ref: "nope" },
    });
  });

  it("fetches a mirror at most once per JR2_MIRROR_FETCH_S: a run attached within it starts from the mirror's commit", async () => {
    ws = make({ JR2_MIRROR_FETCH_S: "3600" });
    const old = (await ws.attach({ ...slot("run-1"), url: fx.app })).base;
    const newer = fx.commitToApp({ "new.txt": "new\n" });
    expect((await ws.attach({ ...slot("run-2"), url: fx.app })).base).toBe(old);
    const fresh = make({ JR2_MIRROR_FETCH_S: "0" });
    expect((await fresh.attach({ ...slot("run-3"), url: fx.app })).base).toBe(newer);
  });

  it("refuses URLs by rule: ext::, http://, a path outside JR2_REPO_ROOTS, the work root, credentials in a URL", async () => {
    const cases: [string, string][] = [
      ["ext::sh -c touch% /tmp/pwned", "command-transport"],
      ["http://127.0.0.1/app.git", "scheme"],
      ["git://example.com/app.git", "scheme"],
      ["/etc", "repo-roots"],
      [fx.workRoot, "work-root"],
      ["https://user:secret@example.com/app.git", "credentials-in-url"],
      ["https://example.com/app.git?access_token=ghp_secretvalue", "credentials-in-url"],
      ["https://example.com/app.git?x=1&Token=ghp_secretvalue", "credentials-in-url"],
      ["https://example.com/app .git", "whitespace"],
      ["https://example.com/app.git\t", "whitespace"],
      ["https://127.0.0.1:1\\@localhost:2/app.git", "backslash"],
      ["--upload-pack=touch /tmp/x", "option"],
      ["relative/path", "relative-path"],
    ];
    for (const [url, rule] of cases)
      await expect(ws.attach({ ...slot("run-1"), url }), url).rejects.toMatchObject({
        code: "JR2_ERR_WORKSPACE_URL_REFUSED",
        fields: { rule },
      });
    // The refusal never repeats the token (messages and logs carry the redacted URL).
    const tokenInQuery = await ws
      .attach({ ...slot("run-1"), url: "https://example.com/app.git?access_token=ghp_secretvalue" })
      .catch((e: unknown) => e);
    expect(JSON.stringify(tokenInQuery)).not.toContain("ghp_secretvalue");
    expect(String((tokenInQuery as Error).message)).not.toContain("ghp_secretvalue");
    const refused = await ws
      .attach({ ...slot("run-1"), url: "https://user:secret@example.com/a.git" })
      .catch((e) => e);
    expect(String(refused.message)).not.toContain("secret");
  });
});

describe("what a refused or failed attach says", () => {
  it("a refused pushUrl is named as the slot's `pushUrl`, not its url, and nothing is attached", async () => {
    const refused = (await ws
      .attach({ ...slot("run-1"), url: fx.app, pushUrl: "ext::sh -c touch% /tmp/pwned" })
      .catch((e: unknown) => e)) as Error;
    expect(refused).toMatchObject({
      code: "JR2_ERR_WORKSPACE_URL_REFUSED",
      fields: { slot: "app", field: "pushUrl", rule: "command-transport" },
    });
    expect(refused.message).toMatch(
      /^Repo Slot `app`: its `pushUrl` `ext::sh -c touch% \/tmp\/pwned` is refused/,
    );
    expect(await ws.record(slot("run-1"))).toBeUndefined();
    // The url itself is named as the `url`.
    await expect(ws.attach({ ...slot("run-1"), url: "/etc" })).rejects.toThrow(
      /^Repo Slot `app`: its `url` `\/etc` is refused by rule `repo-roots`/,
    );
  });

  it("a symlink under a root that leads out of it: the refusal says where it resolves to", async () => {
    const outside = join(fx.dir, "outside-app");
    userGit(fx.dir, "clone", "--quiet", fx.app, outside);
    const link = join(fx.repoRoot, "sneaky");
    symlinkSync(outside, link);
    const refused = (await ws.attach({ ...slot("run-1"), url: link }).catch((e: unknown) => e)) as Error;
    expect(refused).toMatchObject({ code: "JR2_ERR_WORKSPACE_URL_REFUSED", fields: { rule: "repo-roots" } });
    expect(refused.message).toContain(`(\`${link}\` resolves to \`${realpathSync(outside)}\`)`);
  });

  it("a local path that is not a git repository: one line naming the path and the fix, git's first line kept", async () => {
    const plain = join(fx.repoRoot, "not-a-repo");
    mkdirSync(plain);
    writeFileSync(join(plain, "notes.txt"), "just files\n");
    const failed = (await ws.attach({ ...slot("run-1"), url: plain }).catch((e: unknown) => e)) as Error;
    expect(failed).toMatchObject({ code: "JR2_ERR_WORKSPACE_FETCH_FAILED" });
    // One line: the Orchestrator's fault reason and the CLI print it as is (a newline read `\n`).
    expect(failed.message).not.toMatch(/\n|\\n/);
    expect(failed.message).toBe(
      `fetching \`${plain}\` into its mirror failed: \`${plain}\` is not a git repository (git: fatal: '${plain}' does not appear to be a git repository); point the slot's \`url\` at a repository, or make this one (\`git init\`, then a commit)`,
    );
  });

  it("a JR2_REPO_ROOTS entry that is not a directory is warned of at start, naming it; the others still serve", async () => {
    const missing = join(fx.dir, "mnt", "repos");
    const file = join(fx.dir, "a-file");
    writeFileSync(file, "not a directory\n");
    const warned: string[] = [];
    const started = createWorkspaces(
      readWorkspaceConfig({
        JR2_WORK_ROOT: fx.workRoot,
        JR2_REPO_ROOTS: `${missing}:${fx.repoRoot}:${file}`,
        JR2_MIRROR_FETCH_S: "0",
      }),
      { warn: (msg) => warned.push(msg) },
    );
    expect(warned).toEqual([
      `JR2_REPO_ROOTS entry \`${missing}\` does not exist: no Repo Slot can be read from under it until it is a directory; create or mount it, or remove it from JR2_REPO_ROOTS`,
      `JR2_REPO_ROOTS entry \`${file}\` is not a directory: no Repo Slot can be read from under it until it is a directory; create or mount it, or remove it from JR2_REPO_ROOTS`,
    ]);
    expect((await started.attach({ ...slot("run-1"), url: fx.app })).branch).toBe("jr2/review/run-1");
    // A slot outside every existing root is refused as before, the refusal naming the missing root.
    await expect(started.attach({ ...slot("run-2"), url: fx.dir })).rejects.toThrow(
      `JR2_REPO_ROOTS entry \`${missing}\` does not exist`,
    );
  });
});

describe("a commit per pick, retry and fork (issue 28 §3)", () => {
  it("commits a changed Worktree as `jr2 <agent>` naming run, state and pick; an unchanged one makes none", async () => {
    const h = await ws.attach({ ...slot("run-1"), url: fx.app });
    writeFileSync(join(h.path, "NOTES.md"), "coder was here\n");
    writeFileSync(join(h.path, "debug.log"), "ignored\n");
    const c = await ws.commit({ ...slot("run-1"), agent: "coder", state: "coding", pick: "submit" });
    expect(c.created).toBe(true);
    const r = await ws.record(slot("run-1"));
    expect(userGit(r!.repo, "log", "-1", "--format=%an|%s", c.commit)).toBe(
      "jr2 coder|jr2: coder in coding picked submit",
    );
    expect(userGit(r!.repo, "show", "--name-only", "--format=", c.commit)).toBe("NOTES.md");
    const again = await ws.commit({ ...slot("run-1"), agent: "coder", state: "coding" });
    expect(again).toEqual({ commit: c.commit, created: false });
  });

  it("a retry restores the files of its commit, rescuing uncommitted work to refs/jr2/<runId>/before-retry-<n>", async () => {
    const h = await ws.attach({ ...slot("run-1"), url: fx.app });
    writeFileSync(join(h.path, "a.txt"), "one\n");
    const c1 = (await ws.commit({ ...slot("run-1"), agent: "coder", state: "s" })).commit;
    writeFileSync(join(h.path, "a.txt"), "two\n");
    const c2 = (await ws.commit({ ...slot("run-1"), agent: "coder", state: "s" })).commit;
    writeFileSync(join(h.path, "draft.txt"), "unsaved\n");
    const back = await ws.checkoutAt({ ...slot("run-1"), commit: c1 });
    expect(back.commit).toBe(c1);
    expect(readFileSync(join(h.path, "a.txt"), "utf8")).toBe("one\n");
    expect(existsSync(join(h.path, "draft.txt"))).toBe(false);
    const repo = (await ws.record(slot("run-1")))!.repo;
    const rescued = userGit(repo, "rev-parse", "refs/jr2/run-1/before-retry-1");
    expect(userGit(repo, "show", `${rescued}:draft.txt`)).toBe("unsaved");
    expect(userGit(repo, "rev-parse", `${rescued}^`)).toBe(c2);
    await expect(ws.checkoutAt({ ...slot("run-1"), commit: "0".repeat(40) })).rejects.toMatchObject({
      code: "JR2_ERR_WORKSPACE_COMMIT_GONE",
    });
  });

  it("a fork gets its own repository and branch at the version's commit, without the later commits", async () => {
    const h = await ws.attach({ ...slot("run-1"), url: fx.app });
    writeFileSync(join(h.path, "a.txt"), "coder\n");
    const c1 = (await ws.commit({ ...slot("run-1"), agent: "coder", state: "s" })).commit;
    writeFileSync(join(h.path, "a.txt"), "later\n");
    await ws.commit({ ...slot("run-1"), agent: "coder", state: "s" });
    const f = await ws.fork({ ...slot("run-2"), commit: c1, from: slot("run-1") });
    expect(f).toMatchObject({
      path: join(fx.workRoot, "run-2", "main", "app"),
      branch: "jr2/review/run-2",
      commit: c1,
    });
    expect(readFileSync(join(f.path, "a.txt"), "utf8")).toBe("coder\n");
    const repo = (await ws.record(slot("run-2")))!.repo;
    expect(userGit(repo, "for-each-ref", "--format=%(refname)")).toBe("refs/heads/jr2/review/run-2");
    expect(userGit(repo, "rev-list", "--count", "refs/heads/jr2/review/run-2")).toBe("2");
  });

  it("removal rescues then deletes the Worktree; a retry recreates it from the run's repository", async () => {
    const h = await ws.attach({ ...slot("run-1"), url: fx.app });
    writeFileSync(join(h.path, "a.txt"), "kept\n");
    const c1 = (await ws.commit({ ...slot("run-1"), agent: "coder", state: "s" })).commit;
    writeFileSync(join(h.path, "wip.txt"), "wip\n");
    expect(await ws.remove({ runId: "run-1" })).toEqual({ removed: [h.path] });
    expect(existsSync(h.path)).toBe(false);
    const repo = (await ws.record(slot("run-1")))!.repo;
    expect(userGit(repo, "show", "refs/jr2/run-1/before-remove-1:wip.txt")).toBe("wip");
    await expect(ws.commit({ ...slot("run-1"), agent: "coder", state: "s" })).rejects.toMatchObject({
      code: "JR2_ERR_WORKSPACE_LOST",
      fields: { path: h.path },
    });
    await ws.checkoutAt({ ...slot("run-1"), commit: c1 });
    expect(readFileSync(join(h.path, "a.txt"), "utf8")).toBe("kept\n");
  });
});

describe("the diff and the push (issue 28 §4, §5)", () => {
  it("hands the committed diff base..head, cut at JR2_DIFF_MAX_BYTES with a line saying what was left out", async () => {
    const h = await ws.attach({ ...slot("run-1"), url: fx.app });
    writeFileSync(join(h.path, "small.txt"), "hello\n");
    writeFileSync(join(h.path, "big.txt"), `${"x".repeat(80)}\n`.repeat(200));
    await ws.commit({ ...slot("run-1"), agent: "coder", state: "s" });
    const whole = await ws.diff({ ...slot("run-1"), maxBytes: 1_000_000 });
    expect(whole.cut).toBe(false);
    expect(whole.text).toContain("+hello");
    expect(whole.files.map((f) => f.path).sort()).toEqual(["big.txt", "small.txt"]);
    expect(whole.summary).toBe("2 files changed, 201 insertions(+)");
    const cut = await ws.diff({ ...slot("run-1"), maxBytes: 2048 });
    expect(cut.cut).toBe(true);
    const [kept, line] = [
      cut.text.slice(0, cut.text.lastIndexOf("[jr2:")),
      cut.text.slice(cut.text.lastIndexOf("[jr2:")),
    ];
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(2048);
    expect(line).toMatch(
      /^\[jr2: diff cut at 2048 bytes \(JR2_DIFF_MAX_BYTES\): the rest left out \(git stopped\), 2 of 2 files not shown or shown in part/,
    );
  });

  it("pushes the run's branch to the slot's pushUrl (a bare remote) from the credential-holding repository", async () => {
    await ws.attach({ ...slot("run-1"), url: fx.app, pushUrl: fx.remote });
    writeFileSync(join(fx.workRoot, "run-1", "main", "app", "feature.txt"), "done\n");
    const c = await ws.commit({ ...slot("run-1"), agent: "coder", state: "s", pick: "submit" });
    const pushed = await ws.push(slot("run-1"));
    expect(pushed).toEqual({ branch: "jr2/review/run-1", commit: c.commit, url: fx.remote });
    expect(userGit(fx.remote, "rev-parse", "refs/heads/jr2/review/run-1")).toBe(c.commit);
    expect(userGit(fx.remote, "log", "--format=%an", "-1", "jr2/review/run-1")).toBe("jr2 coder");
    // The run's repository never got a remote or credentials: it has no config naming the remote.
    const repo = (await ws.record(slot("run-1")))!.repo;
    expect(readFileSync(join(repo, "config"), "utf8")).not.toContain(fx.remote);
  });
});
