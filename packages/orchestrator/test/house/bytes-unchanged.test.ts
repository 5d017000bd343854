/**
 * Issue 14 ("Bytes unchanged"): moving the Orchestrator into folders, splitting its closures and
 * typing its authoring API must not change a byte a user or a saved run depends on. Both
 * fixtures were written by main before the first move (`write-pin.ts`, `write-store.ts`):
 * a changed Menu would break every provider's prefix cache, a changed fingerprint would drift
 * every saved run, a lost export or bin path would break a workflow author or a Dockerfile.
 * `machineFingerprints` (every Machine, nested ones too) was added later by running this
 * directory's `pin.ts` and `write-pin.ts` in a worktree of ef9ea94 (main before the first move):
 *   node -e 'require("./packages/orchestrator/node_modules/jiti").createJiti(process.cwd() + "/")
 *     .import("./packages/orchestrator/test/house/write-pin.ts")'
 * keeping only that key; the rest of that output equalled the committed pin byte for byte.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createRunHost, INSTANCE_CALLER, openSqliteStore } from "../../src/index.js";
import { exampleWorkflows, pinNow } from "./pin.js";

const pinned = JSON.parse(readFileSync(new URL("./bytes-pin.json", import.meta.url), "utf8"));
const storeFixture = fileURLToPath(new URL("./fixtures/main-store/", import.meta.url));
const expected = JSON.parse(readFileSync(join(storeFixture, "expected.json"), "utf8"));

describe("the bytes main had before the house moved (issue 14)", () => {
  it("every Menu, every Machine fingerprint, the public exports and every bin path are unchanged", async () => {
    const now = await pinNow(await exampleWorkflows());
    expect(now.menus).toEqual(pinned.menus);
    expect(now.fingerprints).toEqual(pinned.fingerprints);
    expect(now.machineFingerprints).toEqual(pinned.machineFingerprints);
    expect(now.exports).toEqual(pinned.exports);
    expect(now.typeExports).toEqual(pinned.typeExports);
    expect(now.bins).toEqual(pinned.bins);
  });

  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("a store written by main restores with no run drifted, each where it was, and takes the next pick", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jr2-house-restore-"));
    dirs.push(dir);
    cpSync(storeFixture, dir, { recursive: true });
    const workflows = await exampleWorkflows();
    // The clock stands where the fixture was written: a saved timer (triage's one-hour `after`)
    // is re-armed with the delay it had left then, not fired because the fixture is old.
    const probe = openSqliteStore(dir);
    const writtenAt = Math.max(...(await probe.list()).map((r) => Date.parse(r.updatedAt)));
    await probe.close();
    const host = createRunHost({ workflows, store: openSqliteStore(dir), clock: () => new Date(writtenAt) });
    try {
      const report = await host.restore();
      expect(report.drifted).toEqual([]);
      expect(report.damaged).toEqual([]);
      expect(report.restored.sort()).toEqual(Object.keys(expected).sort());
      for (const runId of Object.keys(expected)) {
        const run = await host.getRun(runId);
        expect({
          runId,
          workflow: run.workflow,
          status: run.status,
          value: run.value,
          context: run.context,
          turns: run.turns,
          gates: run.gates.map((g) => g.id),
        }).toEqual({ runId, ...expected[runId] });
      }
      // A restored Turn is live, not only listed: the coder of the first run can finish.
      const [coding] = Object.entries(expected).find(
        ([, run]) => (run as { turns: Array<{ state: string }> }).turns[0]?.state === "implement",
      )!;
      const turn = (await host.getRun(coding)).turns[0]!;
      const answer = await host.deliverPick(turn.iid, INSTANCE_CALLER, {
        turnId: turn.turnId!,
        toolCallId: "call-after-restore",
        name: "finish",
        arguments: { summary: "done after the move" },
      });
      expect(answer).toMatchObject({ delivered: true, moved: true });
    } finally {
      await host.close();
    }
  });
});
