/**
 * The Harness's sandbox state (issue 26 item 6, ADR-0173), through real Turns: a sandbox that
 * does not work refuses `read` and `write` Turns with JR2_ERR_SANDBOX_UNAVAILABLE naming the
 * failing layer and its fix (the Orchestrator faults the Turn with that detail), while a
 * `workspace: "none"` Turn runs; `JR2_SANDBOX=off` runs them and says so on every such Turn's
 * feed; the start banner says what the probe found (a missing bwrap named with its fix).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  decideSandbox,
  SANDBOX_OFF_NOTICE,
  sandboxBanner,
  type WorkingSandbox,
} from "../../src/tools/sandbox/working-sandbox.js";
import { type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";
import { harnessFor } from "../fixtures/harness.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../fixtures/scripted-upstream.js";

const BROKEN: WorkingSandbox = {
  mode: "broken",
  probe: {
    ok: false,
    layer: "user namespaces blocked by seccomp",
    detail: "bwrap: No permissions to create new namespace",
    fix: "run the Harness's container with security_opt seccomp=unconfined",
    user: { uid: 10001, gid: 10001 },
    memory: "container",
  },
};

describe("the Harness's sandbox state decides which Turns run", () => {
  let upstream: ScriptedUpstream;
  let orch: FakeOrchestrator;
  beforeEach(async () => {
    upstream = await startScriptedUpstream();
    orch = await startFakeOrchestrator();
  });
  afterEach(async () => {
    await upstream.close();
    await orch.close();
  });

  it("a broken sandbox refuses read and write Turns with the layer and its fix; a workspace-none Turn runs", async () => {
    const h = harnessFor(upstream, orch, { sandbox: BROKEN });
    const cwd = mkdtempSync(join(tmpdir(), "jr2-refusal-"));
    for (const workspace of ["read", "write"] as const) {
      const { settlement } = await h.run(`r/coder/${workspace}`, {
        definition: { model: "sim", instructions: "i", workspace },
        cwd,
      });
      expect(settlement.outcome).toBe("failed");
      expect(settlement.error?.type).toBe("sandbox");
      expect(settlement.error?.message).toContain("JR2_ERR_SANDBOX_UNAVAILABLE");
      expect(settlement.error?.message).toContain("user namespaces blocked by seccomp");
      expect(settlement.error?.message).toContain("security_opt seccomp=unconfined");
    }
    // No model request was sent for a refused Turn.
    expect(upstream.bodies).toHaveLength(0);
    upstream.script([{ sse: answer({ content: "ok" }) }]);
    const none = await h.run("r/coder/none", {});
    expect(none.settlement.outcome).toBe("completed");
  });

  it("JR2_SANDBOX=off runs the Turn and says so on every such Turn's feed", async () => {
    const h = harnessFor(upstream, orch, { sandbox: { mode: "off" } satisfies WorkingSandbox });
    const cwd = mkdtempSync(join(tmpdir(), "jr2-off-"));
    const iid = "r/coder/off";
    for (let turn = 0; turn < 2; turn++) {
      upstream.script([
        { sse: answer({ toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: "echo hi" }) }] }) },
        { sse: answer({ content: "done" }) },
      ]);
      const { events, settlement } = await h.run(iid, {
        definition: { model: "sim", instructions: "i", workspace: "write" },
        cwd,
        ...(turn > 0 ? { kept: true } : {}),
      });
      expect(settlement.outcome).toBe("completed");
      const mine = events.filter((e) => "submissionId" in e && e.submissionId === settlement.submissionId);
      expect(mine.flatMap((e) => (e.type === "warning" ? [e.message] : []))).toEqual([SANDBOX_OFF_NOTICE]);
    }
  });

  it("the banner names a missing bwrap and its fix (JR2_BWRAP at a path that does not exist)", async () => {
    const saved = process.env.JR2_BWRAP;
    process.env.JR2_BWRAP = "/nonexistent/bwrap";
    const sandbox = await decideSandbox(process.env).finally(() => {
      if (saved === undefined) delete process.env.JR2_BWRAP;
      else process.env.JR2_BWRAP = saved;
    });
    expect(sandbox.mode).toBe("broken");
    const banner = sandboxBanner(sandbox);
    expect(banner).toContain("NOT WORKING — bwrap missing");
    expect(banner).toContain("apt-get install bubblewrap");
    expect(sandboxBanner({ mode: "off" })).toContain("OFF (JR2_SANDBOX=off)");
    await expect(decideSandbox({ JR2_SANDBOX: "maybe" } as NodeJS.ProcessEnv)).rejects.toThrow(
      "JR2_SANDBOX must be `on` or `off`, got `maybe`",
    );
  });
});
