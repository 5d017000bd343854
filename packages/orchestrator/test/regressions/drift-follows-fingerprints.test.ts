/**
 * Regression: one start with the wrong workflows (a changed Machine) marked a live run
 * `drifted`, and a later start with the right ones — the saved fingerprints matching the served
 * Machine again — left it drifted for good: `jr2 serve` kept counting it, nothing ran it.
 * Root cause: restore decided drift only for `running` blobs; a `drifted` blob was served
 * read-only without asking the fingerprints again. Now the verdict follows the fingerprints
 * served at each start (`driftCleared` in durability/restore.ts).
 */
import { describe, expect, it } from "vitest";
import { INSTANCE_CALLER } from "../../src/index.js";
import { machine, runSavedMidTurn, until } from "../drift-fixture.js";

describe("a drifted run whose fingerprints match again (regression)", () => {
  it("is restored running at the next right start, re-attached to its Turn, and finishes", async () => {
    const { hostOf, runId, iid, harness } = await runSavedMidTurn();

    // The wrong start: the Machine changed shape, the run is drifted.
    const wrong = hostOf(machine("extra-state"));
    expect((await wrong.restore()).drifted.map((d) => d.runId)).toEqual([runId]);
    expect(await wrong.getRun(runId)).toMatchObject({ status: "drifted" });
    await wrong.close();

    // The right start again: not drifted, restored live.
    const right = hostOf(machine());
    const report = await right.restore();
    expect(report.drifted).toEqual([]);
    expect(report.restored).toEqual([runId]);
    expect(await right.getRun(runId)).toMatchObject({ status: "running", value: "working" });
    expect(await right.listRuns("drifted")).toEqual([]);
    // Re-attached to its ledgered admission (no second one); the run goes on to its end.
    await until(() => right.registrations.get(iid) !== undefined, "re-registered");
    expect(harness.admissions).toHaveLength(1);
    const pick = await right.deliverPick(iid, INSTANCE_CALLER, {
      name: "finish",
      arguments: {},
      toolCallId: "c1",
    });
    expect(pick).toMatchObject({ delivered: true, moved: true, turnComplete: true });
    await right.sendGateEvent(runId, "approve_gate", { type: "approve" });
    expect(await right.getRun(runId)).toMatchObject({ status: "done", value: "done" });
    await right.close();

    // A start after it finds the run settled, as any other.
    const after = hostOf(machine());
    expect((await after.restore()).drifted).toEqual([]);
    expect(await after.getRun(runId)).toMatchObject({ status: "done" });
    await after.close();
  });
});
