/**
 * Retrying a faulted Turn in place (issue 13 item 3, ADR-0271) on the run host with the SQLite
 * store: a Turn faults (its model endpoint down: cause `unavailable`), unrouted (the run
 * faults) or routed to a `failed` final state; `retryRun` sets the run back to its last kept
 * version before the fault and admits the Turn again — a new turnId on its conversation's next
 * epoch — under the same runId, and the run finishes. Refusals are coded. The Turn driver faults
 * the first Turn once and leaves the next one to be played by hand.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fromPromise } from "xstate";
import type { RunBlob } from "../src/durability/store/run-store.js";
import { openSqliteStore } from "../src/durability/store/sqlite.js";
import { agent, createRunHost, defineEvent, faultCauseIs, INSTANCE_CALLER, jr2Setup } from "../src/index.js";
import { faultToRetry } from "../src/runs/retry-plan.js";
import type { TurnContext, TurnDriver } from "../src/turns/turn-driver.js";

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });

/** `working` (a continued Turn) → done; a fault is routed to `failed` only when `routed`. */
function machine(routed: boolean) {
  return jr2Setup({
    events: [finish],
    actors: { worker: agent({ model: "m", instructions: "work" }) },
  }).createMachine({
    id: "retryable",
    initial: "working",
    states: {
      working: {
        invoke: { src: "worker", input: { prompt: "Do the work.", continue: true } },
        on: {
          finish: "done",
          // Unrouted for `unavailable` when not `routed`: the guard takes only a context overflow.
          "agent.fault": {
            guard: routed ? faultCauseIs("unavailable") : faultCauseIs("context-overflow"),
            target: "failed",
          },
        },
      },
      done: { type: "final", meta: { outcome: "succeeded" } },
      failed: { type: "final", meta: { outcome: "failed" } },
    },
  });
}

/** Faults the first `faults` Turns (`unavailable`, as an unreachable endpoint does); later ones are played by hand. */
function faultingDriver(faults = 1) {
  const started: TurnContext[] = [];
  const driver: TurnDriver = {
    start(context) {
      started.push(context);
      if (started.length <= faults)
        queueMicrotask(() => context.fault("model", "the model endpoint is unreachable", "unavailable"));
      return () => {};
    },
  };
  return { driver, started };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function until(check: () => boolean | Promise<boolean>, label: string): Promise<void> {
  for (let i = 0; i < 400 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5));
  if (!(await check())) throw new Error(`never reached: ${label}`);
}

function hostOf(routed: boolean, faults = 1) {
  const dir = mkdtempSync(join(tmpdir(), "jr2-retry-"));
  dirs.push(dir);
  const turns = faultingDriver(faults);
  const store = openSqliteStore(dir);
  const host = createRunHost({
    workflows: new Map([["retryable", machine(routed)]]),
    store,
    turnDriver: turns.driver,
  });
  return { host, turns, store };
}

describe.each([
  ["unrouted (the run faulted)", false, "faulted"],
  ["routed to a failed outcome", true, "done"],
] as const)("retrying a Turn fault %s", (_label, routed, endedAs) => {
  it("sets the run back in place and admits the Turn again on its next epoch; the run succeeds", async () => {
    const { host, turns, store } = hostOf(routed);
    const { runId } = await host.startRun("retryable", {});
    await until(async () => (await host.getRun(runId)).status === endedAs, "the fault");
    const faulted = turns.started[0]!.registration;

    const answer = await host.retryRun(runId, "cli");
    expect(answer).toMatchObject({ runId, status: "running", child: "working#worker", value: "working" });
    expect(answer.turnId).not.toBe(faulted.turnId);
    expect(answer.fromVersion).toBeGreaterThan(0);
    await until(() => turns.started.length === 2, "admitted again");
    const again = turns.started[1]!.registration;
    // Epochs never go back: the faulted conversation stays retired.
    expect(again.iid).toBe(`${faulted.iid}/1`);
    expect(again.turnId).toBe(answer.turnId);
    expect(again.input.fresh).toBe(true);

    const run = await host.getRun(runId);
    expect(run).toMatchObject({ status: "running", value: "working" });
    expect(run.outcome).toBeUndefined();
    const pick = await host.deliverPick(again.iid, INSTANCE_CALLER, {
      name: "finish",
      arguments: {},
      toolCallId: "c1",
    });
    expect(pick).toMatchObject({ delivered: true, moved: true, turnComplete: true });
    await until(async () => (await host.getRun(runId)).status === "done", "done");
    expect(await host.getRun(runId)).toMatchObject({ outcome: "succeeded", value: "done" });
    const log = await host.eventLog(runId, 0, 100);
    expect(log.find((e) => e.type === "retried")).toMatchObject({
      child: "working#worker",
      turnId: answer.turnId,
      fromVersion: answer.fromVersion,
      by: "cli",
    });
    // The set-back run is kept as the run's next version, with its cause.
    const history = await store.versions(runId);
    expect(history.find((v) => v.cause.kind === "retry")).toMatchObject({
      status: "running",
      value: "working",
      cause: { kind: "retry", child: "working#worker", from: answer.fromVersion, by: "cli" },
    });
    // A succeeded run has nothing to retry.
    await expect(host.retryRun(runId)).rejects.toMatchObject({ code: "JR2_ERR_RUN_NOT_RETRYABLE" });
    await host.close();
  });
});

describe("retry refusals (ADR-0271)", () => {
  it("refuses a running run, a cancelled one and an unknown one, with codes", async () => {
    const { host } = hostOf(true, 0);
    const { runId } = await host.startRun("retryable", {});
    await expect(host.retryRun(runId)).rejects.toMatchObject({
      code: "JR2_ERR_RUN_NOT_RETRYABLE",
      message: expect.stringContaining("it is running"),
    });
    await host.cancelRun(runId);
    await expect(host.retryRun(runId)).rejects.toMatchObject({
      code: "JR2_ERR_RUN_NOT_RETRYABLE",
      message: expect.stringContaining("cancelled"),
    });
    await expect(host.retryRun("run-nope")).rejects.toMatchObject({ code: "JR2_ERR_RUN_NOT_FOUND" });
    await host.close();
  });
});

describe("what has a fault to retry (faultToRetry)", () => {
  const record = (routed: boolean) => ({
    agent: "worker",
    state: "working",
    turnId: "t1",
    reason: "infra",
    routed,
    at: "",
  });
  const blob = (over: Partial<RunBlob>) => ({ status: "faulted", faults: [], ...over }) as unknown as RunBlob;

  it("takes an unrouted fault that faulted the run, and a routed one that reached a failed outcome", () => {
    expect(faultToRetry(blob({ faults: [record(false)] }))).toMatchObject({ fault: { turnId: "t1" } });
    expect(faultToRetry(blob({ status: "done", outcome: "failed", faults: [record(true)] }))).toMatchObject({
      fault: { routed: true },
    });
  });

  it("takes a Machine error after a routed fault as a Machine fault; refuses a failed outcome no fault reached, and a succeeded run", () => {
    // A Machine fault is retried by its own rules (ADR-0272: source changed or force, confirmed).
    expect(faultToRetry(blob({ faults: [record(true)], fault: { reason: "boom" } }))).toEqual({
      machineFault: "boom",
    });
    expect(faultToRetry(blob({ status: "done", outcome: "failed", faults: [] }))).toMatchObject({
      why: expect.stringContaining("its failed outcome was not reached through a Turn fault"),
    });
    expect(faultToRetry(blob({ status: "done", outcome: "succeeded" }))).toEqual({ why: "it succeeded" });
  });

  it("explains a fault routed to a final state without meta.outcome: the run succeeded (issue 22 §5)", () => {
    const found = faultToRetry(blob({ status: "done", outcome: "succeeded", faults: [record(true)] }));
    expect("why" in found && found.why).toContain("declares no `meta.outcome`");
    expect("why" in found && found.why).toContain("JR2_WARN_OUTCOME_UNDECLARED");
  });
});

describe("a run that failed at start, with no Turn fault (newcomer review, session 10)", () => {
  /** `attach` rejects at once, as a Repo Slot the Harness refuses does; its onError reaches `failed`. */
  const refusing = jr2Setup({
    events: [],
    actors: {
      attach: fromPromise<void, unknown>(() => Promise.reject(new Error("repo is not under JR2_REPO_ROOTS"))),
    },
    types: {} as { input: { repo: string; task: string } },
  }).createMachine({
    id: "refusing",
    initial: "attaching",
    states: {
      attaching: {
        invoke: { src: "attach", onDone: "done", onError: "failed" },
      },
      done: { type: "final", meta: { outcome: "succeeded" } },
      failed: { type: "final", meta: { outcome: "failed" } },
    },
  });

  it("names the next step: a new run with its input, as a command that works in a shell once the input is fixed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jr2-retry-"));
    dirs.push(dir);
    const host = createRunHost({ workflows: new Map([["refusing", refusing]]), store: openSqliteStore(dir) });
    const input = { repo: "/home/me/app", task: "don't break it" };
    const { runId } = await host.startRun("refusing", input);
    await until(async () => (await host.getRun(runId)).status === "done", "the failed outcome");
    const refused = await host.retryRun(runId).catch((error: Error) => error);
    expect(refused).toMatchObject({ code: "JR2_ERR_RUN_NOT_RETRYABLE" });
    const message = (refused as Error).message;
    expect(message).toContain("not reached through a Turn fault");
    expect(message).toContain(`\`jr2 show ${runId}\` says why it failed`);
    const command = /`jr2 run refusing --input (.*) --follow`/.exec(message);
    expect(command, message).not.toBeNull();
    // The quoted input survives a shell, `'` and all: pasted, it starts the same run.
    const echoed = execFileSync("sh", ["-c", `printf %s ${command![1]}`], { encoding: "utf8" });
    expect(JSON.parse(echoed)).toEqual(input);
    await host.close();
  });
});
