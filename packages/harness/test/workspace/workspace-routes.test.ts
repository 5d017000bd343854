import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CommitAnswer, DiffAnswer, PushAnswer, SlotHandle } from "@jr2/wire";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildHarness } from "../../src/index.js";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture, userGit } from "./git-fixture.js";

const TOKEN = "harness-token-for-workspace-routes";
let fx: GitFixture;
let app: ReturnType<typeof buildHarness>;
const slot = { runId: "run-1", workspace: "main", slot: "app" };

beforeEach(() => {
  fx = makeGitFixture();
  app = buildHarness({
    models: {},
    orchestratorUrl: "http://127.0.0.1:9",
    harnessToken: TOKEN,
    sandboxToken: "",
    workspaces: createWorkspaces(
      readWorkspaceConfig({ JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot }),
    ),
  });
});
afterEach(async () => {
  await app.close();
  fx.cleanup();
});

const post = (url: string, payload: unknown, token = TOKEN) =>
  app.inject({
    method: "POST",
    url,
    payload: payload as object,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });

describe("the Harness's /workspaces/* routes (issue 28 §2, @jr2/wire workspace.ts)", () => {
  it("refuse a caller without the Harness bearer before touching git (401, nothing made)", async () => {
    const res = await post("/workspaces/attach", { ...slot, workflow: "review", url: fx.app }, "");
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe("JR2_ERR_AUTH_MISSING");
    expect(existsSync(join(fx.workRoot, "run-1"))).toBe(false);
  });

  it("attach, commit, diff, push and remove a slot over the wire", async () => {
    const attached = SlotHandle.parse(
      (
        await post("/workspaces/attach", { ...slot, workflow: "review", url: fx.app, pushUrl: fx.remote })
      ).json(),
    );
    expect(attached.branch).toBe("jr2/review/run-1");
    writeFileSync(join(attached.path, "hello.txt"), "hi\n");
    const c = CommitAnswer.parse(
      (await post("/workspaces/commit", { ...slot, agent: "coder", state: "coding" })).json(),
    );
    expect(c.created).toBe(true);
    const d = DiffAnswer.parse((await post("/workspaces/diff", slot)).json());
    expect(d.text).toContain("+hi");
    const p = PushAnswer.parse((await post("/workspaces/push", slot)).json());
    expect(userGit(fx.remote, "rev-parse", p.branch)).toBe(c.commit);
    expect((await post("/workspaces/remove", { runId: "run-1" })).json()).toEqual({
      removed: [attached.path],
    });
  });

  it("answer a refused URL 400 and an unknown slot 404, coded", async () => {
    const refused = await post("/workspaces/attach", { ...slot, workflow: "review", url: "ext::sh -c id" });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({
      code: "JR2_ERR_WORKSPACE_URL_REFUSED",
      rule: "command-transport",
    });
    const unknown = await post("/workspaces/diff", { ...slot, runId: "nope" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe("JR2_ERR_WORKSPACE_SLOT_UNKNOWN");
  });
});
