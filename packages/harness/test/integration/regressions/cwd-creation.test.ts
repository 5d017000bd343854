/**
 * Regression (P0): a `cwd` under /proc (e.g. "/proc/self/nope") made a Submission hang forever
 * at 100% CPU. Root cause: seatPhase called `mkdir(cwd, { recursive: true })`, which on Node 20
 * loops forever on such paths; a symlink can lead any path there, and pi's write tool made the
 * same call for the model's paths. Fixed for the whole kind: no recursive mkdir on a path the
 * Harness did not choose — directories are made one component at a time (working-directory.ts),
 * the write tool gets that mkdir, pseudo-filesystem cwds are refused at admission
 * (JR2_ERR_CWD_INVALID), and a cwd that cannot be created settles the Submission failed
 * `{ type: "cwd" }`.
 */
import { existsSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../fixtures/fake-openai.js";
import { answer, type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { harnessFor, parsed } from "../../fixtures/harness.js";

let model: FakeOpenAI;
let orch: FakeOrchestrator;
beforeEach(async () => {
  model = await startFakeOpenAI();
  orch = await startFakeOrchestrator();
});
afterEach(async () => {
  await model.close();
  await orch.close();
});

const withCwd = (cwd: string, workspace: "read" | "write" = "read") => ({
  definition: { model: "sim", instructions: "i", workspace },
  cwd,
});

describe("a cwd under a pseudo-filesystem", () => {
  it.each(["/proc/self/nope", "/sys/nope", "/dev/nope", "/tmp/../proc/self/x", "/proc"])(
    "`%s` is refused at admission with JR2_ERR_CWD_INVALID naming it",
    async (cwd) => {
      const h = harnessFor(model, orch);
      const res = await h.admit("r1/cwd", withCwd(cwd));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: "JR2_ERR_CWD_INVALID", cwd, field: "cwd" });
      expect(res.json().error).toContain(cwd);
      await h.app.close();
    },
  );
});

describe("a cwd that cannot be created", () => {
  it("through a symlink into /proc settles failed { type: cwd } without a model request", async () => {
    const root = mkdtempSync(join(tmpdir(), "jr2-cwd-"));
    symlinkSync("/proc/self", join(root, "link"));
    const h = harnessFor(model, orch);
    const { settlement } = await h.run("r1/link", withCwd(join(root, "link", "nope", "deeper")));
    expect(settlement.outcome).toBe("failed");
    expect(settlement.error?.type).toBe("cwd");
    expect(settlement.error?.message).toContain(join(root, "link", "nope"));
    expect(model.bodies).toHaveLength(0);
    await h.app.close();
  });

  it("under a file settles failed { type: cwd }; a later Submission with a good cwd seats", async () => {
    const root = mkdtempSync(join(tmpdir(), "jr2-cwd-"));
    writeFileSync(join(root, "file"), "x");
    const h = harnessFor(model, orch);
    const first = await h.run("r1/file", withCwd(join(root, "file", "sub")));
    expect(first.settlement.outcome).toBe("failed");
    expect(first.settlement.error?.type).toBe("cwd");
    expect(first.settlement.error?.message).toMatch(/ENOTDIR/);
    model.script([{ text: "done" }]);
    const good = join(root, "a", "b", "c");
    const second = await h.run("r1/file", { ...withCwd(good), kept: true });
    expect(second.settlement.outcome).toBe("completed");
    expect(statSync(good).isDirectory()).toBe(true);
    await h.app.close();
  });
});

describe("the write tool's directories", () => {
  it("a write through a symlink into /proc fails with a receipt instead of spinning", async () => {
    const root = mkdtempSync(join(tmpdir(), "jr2-cwd-"));
    symlinkSync("/proc/self", join(root, "link"));
    const h = harnessFor(model, orch);
    orch.answer = () => answer({ allowed: [], turnComplete: true });
    model.script([
      {
        toolCalls: [{ name: "write", arguments: JSON.stringify({ path: "link/nope/x.txt", content: "x" }) }],
      },
      { text: "I could not write it." },
    ]);
    const { settlement } = await h.run("r1/write", withCwd(root, "write"));
    expect(settlement.outcome).toBe("completed");
    const second = JSON.stringify(parsed(model)[1]!.messages);
    expect(second).toContain("cannot create");
    expect(existsSync(join(root, "link", "nope"))).toBe(false);
    await h.app.close();
  });
});
