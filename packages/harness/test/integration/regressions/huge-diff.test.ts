/**
 * Regression (adversary M4, ADR-0212): `{{diff repos.app}}` on a pick that added a 72 MB text
 * file failed with `JR2_ERR_WORKSPACE_GIT_FAILED exit -1 (no output)` and blocked the reviewer's
 * Turn. Root cause: the whole `git diff` was read through execFile, whose 64 MiB maxBuffer killed
 * git before jr2 ever cut the text at JR2_DIFF_MAX_BYTES. Fixed: git's output is streamed and
 * git is stopped past the bound; the file list comes from `--numstat`, whole.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../../src/workspace/workspace-config.js";
import { createWorkspaces, type Workspaces } from "../../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture } from "../../workspace/git-fixture.js";

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

describe("a diff larger than Node's maxBuffer (adversary M4)", () => {
  it("a pick adding a 72 MB text file and a binary file: the diff is cut at JR2_DIFF_MAX_BYTES with the cut line, every file listed", async () => {
    const h = await ws.attach({ ...slot, url: fx.app });
    writeFileSync(join(h.path, "big.txt"), "line of text that is long enough\n".repeat(2_200_000)); // ~72 MB
    writeFileSync(join(h.path, "bin.dat"), Buffer.alloc(5_000_000, 0));
    await ws.commit({ ...slot, agent: "coder", state: "s", pick: "submit" });
    const d = await ws.diff({ ...slot, maxBytes: 65_536 });
    expect(d.cut).toBe(true);
    const at = d.text.lastIndexOf("[jr2:");
    expect(Buffer.byteLength(d.text.slice(0, at))).toBeLessThanOrEqual(65_536);
    expect(d.text.slice(0, at)).toContain("+line of text that is long enough\n");
    expect(d.text.slice(at)).toMatch(
      /^\[jr2: diff cut at 65536 bytes \(JR2_DIFF_MAX_BYTES\): the rest left out \(git stopped\), 2 of 2 files not shown or shown in part; `git diff [0-9a-f]{12}\.\.[0-9a-f]{12}` in the Worktree shows all\]\n$/,
    );
    expect(d.files).toEqual([
      { path: "big.txt", added: 2_200_000, removed: 0 },
      { path: "bin.dat", added: 0, removed: 0 },
    ]);
    expect(d.summary).toBe("2 files changed, 2200000 insertions(+)");
  });
});
