import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture, userGit } from "./git-fixture.js";
import { type HttpsGitServer, startHttpsGitServer } from "./https-git-server.js";

const TOKEN = "jr2-test-token-7f3a9c";
let fx: GitFixture;
let server: HttpsGitServer;
const slot = { runId: "run-1", workflow: "review", workspace: "main", slot: "app" };

beforeEach(async () => {
  fx = makeGitFixture();
  const served = join(fx.dir, "served");
  mkdirSync(served);
  userGit(fx.dir, "clone", "--quiet", "--bare", fx.app, join(served, "app.git"));
  server = await startHttpsGitServer(served, TOKEN, fx.dir);
});
afterEach(async () => {
  await server.close();
  fx.cleanup();
});

describe("publish over https with a token (issue 28 §5, credentials from operator-named files)", () => {
  it("fetches and pushes jr2/<workflow>/<runId> with the token from JR2_GIT_TOKEN_FILE; the token reaches no repository or message", async () => {
    const tokenFile = join(fx.dir, "token");
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const ws = createWorkspaces(
      readWorkspaceConfig({
        JR2_WORK_ROOT: fx.workRoot,
        JR2_REPO_ROOTS: fx.repoRoot,
        JR2_GIT_TOKEN_FILE: tokenFile,
        // The token is keyed to the listed origin (adversary L5): this server's host:port.
        JR2_GIT_TOKEN_HOSTS: `forge.example.com, ${new URL(server.url).host}`,
        JR2_GIT_CA_FILE: server.caFile,
      }),
    );
    const url = `${server.url}app.git`;
    const h = await ws.attach({ ...slot, url });
    writeFileSync(join(h.path, "feature.txt"), "over https\n");
    const c = await ws.commit({ ...slot, agent: "coder", state: "coding", pick: "submit" });
    const pushed = await ws.push(slot);
    expect(pushed).toEqual({ branch: "jr2/review/run-1", commit: c.commit, url });
    expect(userGit(join(fx.dir, "served", "app.git"), "rev-parse", "refs/heads/jr2/review/run-1")).toBe(
      c.commit,
    );
    const repo = (await ws.record(slot))?.repo as string;
    for (const file of [join(repo, "config"), join(h.path, ".git")])
      expect(readFileSync(file, "utf8")).not.toContain(TOKEN);
  });

  it("without the token the server refuses the fetch and attach fails coded (JR2_ERR_WORKSPACE_FETCH_FAILED)", async () => {
    const ws = createWorkspaces(
      readWorkspaceConfig({
        JR2_WORK_ROOT: fx.workRoot,
        JR2_REPO_ROOTS: fx.repoRoot,
        JR2_GIT_CA_FILE: server.caFile,
      }),
    );
    const url = `${server.url}app.git`;
    await expect(ws.attach({ ...slot, url })).rejects.toMatchObject({
      code: "JR2_ERR_WORKSPACE_FETCH_FAILED",
    });
    expect(server.refused).toBeGreaterThan(0);
  });

  it("JR2_GIT_TOKEN_HOSTS not listing the URL's host: the token is not sent, the server refuses (JR2_ERR_WORKSPACE_FETCH_FAILED)", async () => {
    const tokenFile = join(fx.dir, "token");
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const ws = createWorkspaces(
      readWorkspaceConfig({
        JR2_WORK_ROOT: fx.workRoot,
        JR2_REPO_ROOTS: fx.repoRoot,
        JR2_GIT_TOKEN_FILE: tokenFile,
        JR2_GIT_TOKEN_HOSTS: "forge.example.com",
        JR2_GIT_CA_FILE: server.caFile,
      }),
    );
    await expect(ws.attach({ ...slot, url: `${server.url}app.git` })).rejects.toMatchObject({
      code: "JR2_ERR_WORKSPACE_FETCH_FAILED",
    });
    expect(server.refused).toBeGreaterThan(0);
  });

  it("a token without JR2_GIT_TOKEN_HOSTS refuses the start, naming the variable and the fix; `*` sends it to every https host", async () => {
    const tokenFile = join(fx.dir, "token");
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const base = { JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot, JR2_GIT_CA_FILE: server.caFile };
    for (const source of [{ JR2_GIT_TOKEN_FILE: tokenFile }, { JR2_GIT_TOKEN_ENV: "FORGE_TOKEN" }])
      for (const hosts of [{}, { JR2_GIT_TOKEN_HOSTS: " , " }])
        expect(() => readWorkspaceConfig({ ...base, ...source, ...hosts })).toThrow(
          new RegExp(
            `${Object.keys(source)[0]} is set but JR2_GIT_TOKEN_HOSTS is not: .*JR2_GIT_TOKEN_HOSTS=git\\.home`,
          ),
        );
    // No token: nothing to keep from any host, so nothing is required.
    expect(readWorkspaceConfig(base).credentials.tokenHosts).toBeUndefined();
    // `*`, said on purpose: the token reaches this server's host as it would any other.
    const ws = createWorkspaces(
      readWorkspaceConfig({ ...base, JR2_GIT_TOKEN_FILE: tokenFile, JR2_GIT_TOKEN_HOSTS: "*" }),
    );
    const attached = await ws.attach({ ...slot, url: `${server.url}app.git` });
    expect(attached.branch).toMatch(/^jr2\//);
  });

  it("a listed forge that redirects: jr2 does not follow, so the token never reaches the host it names; the error says what to do", async () => {
    const tokenFile = join(fx.dir, "token");
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const movedDir = join(fx.dir, "moved");
    mkdirSync(movedDir);
    const moved = await startHttpsGitServer(join(fx.dir, "served"), TOKEN, movedDir, {
      redirectTo: server.url,
    });
    try {
      const bundle = join(fx.dir, "ca-bundle.pem");
      writeFileSync(bundle, readFileSync(server.caFile, "utf8") + readFileSync(moved.caFile, "utf8"));
      const ws = createWorkspaces(
        readWorkspaceConfig({
          JR2_WORK_ROOT: fx.workRoot,
          JR2_REPO_ROOTS: fx.repoRoot,
          JR2_GIT_TOKEN_FILE: tokenFile,
          JR2_GIT_TOKEN_HOSTS: new URL(moved.url).host,
          JR2_GIT_CA_FILE: bundle,
        }),
      );
      const failed = (await ws
        .attach({ ...slot, url: `${moved.url}app.git` })
        .catch((e: unknown) => e)) as Error;
      expect(failed).toMatchObject({ code: "JR2_ERR_WORKSPACE_FETCH_FAILED" });
      expect(failed.message).toContain("give the Repo Slot the URL it redirects to");
      expect(failed.message).not.toContain(TOKEN);
      expect(moved.requests).toBeGreaterThan(0);
      // The host the redirect named (not listed) saw nothing: no request, so no token.
      expect(server.requests).toBe(0);
    } finally {
      await moved.close();
    }
  });
});
