/**
 * Resuming a drifted run (issue 13 item 4, ADR-0271) on the run host with the SQLite store:
 * a run is saved mid-Turn, the workflow changes, a second host marks it drifted; `resumeRun`
 * answers the plan (dry run), resumes it where the states still exist — keeping an unchanged
 * Agent's conversation, moving a changed Agent's Turn onto a new one — and refuses, naming the
 * state, where the current state was removed. Turns run the shipped Harness Turn driver
 * against a fake Harness that records admissions.
 */
import { describe, expect, it } from "vitest";
import { driftReason } from "../src/durability/restore.js";
import type { RunBlob } from "../src/durability/store/run-store.js";
import { openSqliteStore } from "../src/durability/store/sqlite.js";
import { agent, createRunHost, INSTANCE_CALLER, jr2Setup, workspace } from "../src/index.js";
import { finish, machine, runSavedMidTurn, storeDir, until } from "./drift-fixture.js";

/** A run saved mid-Turn under v1, then a second host serving `next` (the run drifted). */
async function driftedRun(next: ReturnType<typeof machine>) {
  const { hostOf, runId, iid, harness } = await runSavedMidTurn();
  const second = hostOf(next);
  const report = await second.restore();
  expect(report.drifted.map((d) => d.runId)).toEqual([runId]);
  return { second, runId, iid, harness };
}

describe("resuming a drifted run (ADR-0271)", () => {
  it("answers the plan without acceptDrift and changes nothing", async () => {
    const { second, runId } = await driftedRun(machine("extra-state"));
    const plan = await second.resumeRun(runId, {});
    expect(plan).toMatchObject({
      status: "drifted",
      resumed: false,
      resumable: true,
      states: [{ machine: "", state: "working", present: true }],
      menus: [{ machine: "", agent: "worker", changed: false, why: "unchanged" }],
      moved: [],
    });
    expect(plan.machines[0]!.saved).not.toBe(plan.machines[0]!.served);
    expect(await second.getRun(runId)).toMatchObject({ status: "drifted" });
    await second.close();
  });

  it("resumes where every state still exists: the unchanged Agent keeps its conversation, the run finishes", async () => {
    const { second, runId, iid, harness } = await driftedRun(machine("extra-state"));
    const answer = await second.resumeRun(runId, { acceptDrift: true }, "cli");
    expect(answer).toMatchObject({ status: "running", resumed: true, moved: [] });
    // Re-attached to its ledgered admission: no second admission.
    await until(() => second.registrations.get(iid) !== undefined, "re-registered");
    expect(harness.admissions).toHaveLength(1);
    const pick = await second.deliverPick(iid, INSTANCE_CALLER, {
      name: "finish",
      arguments: {},
      toolCallId: "c1",
    });
    expect(pick).toMatchObject({ delivered: true, moved: true, turnComplete: true });
    await second.sendGateEvent(runId, "approve_gate", { type: "approve" });
    expect(await second.getRun(runId)).toMatchObject({ status: "done", value: "done" });
    const log = await second.eventLog(runId, 0, 100);
    expect(log.find((e) => e.type === "resumed")).toMatchObject({ by: "cli", moved: [] });
    await expect(second.resumeRun(runId, { acceptDrift: true })).rejects.toMatchObject({
      code: "JR2_ERR_RUN_NOT_DRIFTED",
    });
    await second.close();
  });

  it("moves a changed Agent's live Turn onto its next epoch with its task and a conversation-new notice", async () => {
    const { second, runId, iid, harness } = await driftedRun(machine("menu-changed"));
    const dry = await second.resumeRun(runId, {});
    expect(dry.menus).toEqual([{ machine: "", agent: "worker", changed: true, why: "bytes-differ" }]);
    expect(dry.moved).toEqual(["working#worker"]);
    const firstTurnId = harness.admissions[0]!.body.turnId;
    const answer = await second.resumeRun(runId, { acceptDrift: true });
    expect(answer).toMatchObject({ resumed: true, moved: ["working#worker"] });
    await until(() => harness.admissions.length === 2, "admitted again");
    const again = harness.admissions[1]!;
    expect(again.iid).toBe(`${iid}/1`);
    expect(again.body).toMatchObject({
      kind: "task",
      prompt: "Do the work.",
      notices: [{ type: "conversation-new" }],
    });
    expect(again.body.kept).toBeUndefined();
    expect(again.body.turnId).not.toBe(firstTurnId);
    expect(second.registrations.get(iid)).toBeUndefined();
    // The moved Turn is not continued: its record ended as left; the new one runs.
    const turns = await second.turns(runId);
    expect(turns.turns.map((t) => [t.turnId, t.outcome])).toEqual([
      [firstTurnId, "left"],
      [again.body.turnId, "running"],
    ]);
    const pick = await second.deliverPick(`${iid}/1`, INSTANCE_CALLER, {
      name: "finish",
      arguments: {},
      toolCallId: "c1",
    });
    expect(pick).toMatchObject({ moved: true, turnComplete: true });
    await second.close();
  });

  it("refuses, naming the state, when the current state was removed; the run stays drifted", async () => {
    const { second, runId } = await driftedRun(machine("working-removed"));
    const plan = await second.resumeRun(runId, {});
    expect(plan).toMatchObject({ resumable: false, states: [{ state: "working", present: false }] });
    const refusal = second.resumeRun(runId, { acceptDrift: true });
    await expect(refusal).rejects.toMatchObject({ code: "JR2_ERR_RUN_RESUME_STATES_MISSING" });
    await expect(refusal).rejects.toThrow("state `working` (Machine `(top)`)");
    expect(await second.getRun(runId)).toMatchObject({ status: "drifted" });
    await second.close();
  });

  it("refuses a run that is not drifted, and an unknown run", async () => {
    const { second, runId } = await driftedRun(machine("extra-state"));
    const { runId: live } = await second.startRun("durable", {});
    await expect(second.resumeRun(live, { acceptDrift: true })).rejects.toMatchObject({
      code: "JR2_ERR_RUN_NOT_DRIFTED",
    });
    await expect(second.resumeRun("run-nope", {})).rejects.toMatchObject({ code: "JR2_ERR_RUN_NOT_FOUND" });
    expect(runId).toBeTruthy();
    await second.close();
  });
});

/** A run whose work is a `workspace()` body; `changed` adds a state to the body only. */
function nested(changed: boolean) {
  const body = jr2Setup({
    events: [finish],
    actors: { worker: agent({ model: "m", instructions: "work" }) },
  }).createMachine({
    id: "nested-body",
    initial: "working",
    states: {
      working: {
        invoke: { src: "worker", input: { prompt: "Do the work.", continue: true } },
        on: { finish: "done", "agent.fault": "done" },
      },
      done: { type: "final" },
      ...(changed ? { extra: {} } : {}),
    },
  });
  return jr2Setup({ events: [], actors: { work: workspace(body, { name: "w" }) } }).createMachine({
    id: "nested",
    initial: "running",
    states: { running: { invoke: { src: "work", onDone: "done" } }, done: { type: "final" } },
  });
}

describe("drift of a nested Machine (ADR-0271)", () => {
  it("a changed workspace() body is drift on restore, naming that Machine; resume restores it", async () => {
    const dir = storeDir();
    const hostOf = (changed: boolean) =>
      createRunHost({ workflows: new Map([["nested", nested(changed)]]), store: openSqliteStore(dir) });
    const first = hostOf(false);
    await first.restore();
    const { runId } = await first.startRun("nested", {});
    await first.close();
    const second = hostOf(true);
    const report = await second.restore();
    expect(report.drifted).toEqual([
      expect.objectContaining({
        runId,
        reason: expect.stringContaining("the Machine at `running/body` of `nested` changed shape"),
      }),
    ]);
    const plan = await second.resumeRun(runId, {});
    expect(plan.machines.map((m) => m.machine)).toEqual(["", "running/body"]);
    expect(plan.states).toEqual([
      { machine: "", state: "running", present: true },
      { machine: "running/body", state: "working", present: true },
    ]);
    expect(await second.resumeRun(runId, { acceptDrift: true })).toMatchObject({
      resumed: true,
      status: "running",
    });
    await second.close();
  });

  const blob = (nested?: Record<string, string>) =>
    ({ workflow: "review", machineFingerprint: "top", machineFingerprints: nested }) as unknown as RunBlob;
  const served = {
    machine: {} as never,
    fingerprint: "top",
    machineFingerprints: { "": "top", "working/body": "b2" },
  };

  it("is drift when a saved nested fingerprint differs, naming the Machine", () => {
    expect(driftReason(blob({ "": "top", "working/body": "b1" }), served)).toContain(
      "the Machine at `working/body` of `review` changed shape",
    );
    expect(driftReason(blob({ "": "top", "working/body": "b2" }), served)).toBeUndefined();
  });

  it("compares the top fingerprint alone for a blob saved before nested ones were kept", () => {
    expect(driftReason(blob(undefined), served)).toBeUndefined();
  });
});
