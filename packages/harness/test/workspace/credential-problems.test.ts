/**
 * The git credentials the operator names are checked when the Harness starts (newcomer, session
 * 10: a missing JR2_GIT_TOKEN_FILE came up silently and failed only at the first run's fetch):
 * one warn line each, naming the variable, the path and the fix. The start goes on — the values
 * are read again at each push, so a file mounted later works.
 */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture } from "./git-fixture.js";

let fx: GitFixture;
beforeEach(() => {
  fx = makeGitFixture();
});
afterEach(() => fx.cleanup());

function startWarnings(env: NodeJS.ProcessEnv): string[] {
  const warned: string[] = [];
  createWorkspaces(readWorkspaceConfig({ JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot, ...env }), {
    env,
    warn: (msg) => warned.push(msg),
  });
  return warned;
}

describe("git credentials at start", () => {
  it("warns for each named file the Harness cannot read and an empty token variable, naming it and the fix", () => {
    const missing = join(fx.dir, "nope.txt");
    const warned = startWarnings({
      JR2_GIT_TOKEN_FILE: missing,
      JR2_GIT_TOKEN_HOSTS: "git.home",
      JR2_GIT_CA_FILE: join(fx.dir, "no-ca.pem"),
    });
    expect(warned).toEqual([
      `JR2_GIT_TOKEN_FILE=${missing} cannot be read by the Harness (ENOENT): every push or fetch that needs it fails until it can; fix the path or its owner and mode`,
      expect.stringMatching(/^JR2_GIT_CA_FILE=.*no-ca\.pem cannot be read by the Harness \(ENOENT\)/),
    ]);
    expect(startWarnings({ JR2_GIT_TOKEN_ENV: "FORGE_TOKEN", JR2_GIT_TOKEN_HOSTS: "git.home" })).toEqual([
      "JR2_GIT_TOKEN_ENV names `FORGE_TOKEN`, which is unset or empty: every push or fetch that needs the token fails until it is set",
    ]);
  });

  it("says nothing when every named file is readable and the variable is set", () => {
    const token = join(fx.dir, "token");
    writeFileSync(token, "t0ken\n");
    chmodSync(token, 0o400);
    expect(startWarnings({ JR2_GIT_TOKEN_FILE: token, JR2_GIT_TOKEN_HOSTS: "git.home" })).toEqual([]);
    expect(
      startWarnings({
        JR2_GIT_TOKEN_ENV: "FORGE_TOKEN",
        FORGE_TOKEN: "t0ken",
        JR2_GIT_TOKEN_HOSTS: "git.home",
      }),
    ).toEqual([]);
  });
});
