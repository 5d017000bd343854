/**
 * Regression: a typo in an invoke `src` (`labeller` for `labeler`) crashed the Orchestrator.
 * Root cause: (1) createMachine did not check string srcs — xstate resolves them only when the
 * actor starts; (2) the unknown src errored the run into a snapshot whose `children` lacked the
 * child it named, so `getPersistedSnapshot()` threw inside persistence's `blobOf`, run from a
 * microtask: an uncaught exception ended the process. Fixed by refusing unknown srcs at
 * createMachine and by taking snapshots as data (a snapshot that cannot be taken faults the run).
 */
import { Jr2Error } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { fromPromise, spawnChild } from "xstate";
import { createMemoryStore } from "../../src/durability/store/run-store.js";
import { agent, createRunHost, defineEvent, jr2Setup } from "../../src/index.js";

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });

// biome-ignore lint/suspicious/noExplicitAny: machines built from loose configs in these tests
const machineOf = (config: any, actors: Record<string, unknown> = {}) =>
  jr2Setup({ events: [finish], actors }).createMachine(config);

/** A healthy workflow beside the broken one: the host must keep serving it. */
const healthy = machineOf({ initial: "a", states: { a: { on: { finish: "b" } }, b: { type: "final" } } });

async function hostWith(broken: ReturnType<typeof machineOf>) {
  const store = createMemoryStore();
  const host = createRunHost({
    workflows: new Map([
      ["broken", broken],
      ["healthy", healthy],
    ]),
    store,
  });
  return { host, store };
}

describe("an invoke src typo (C: newcomer's P1)", () => {
  it("createMachine refuses an invoke src that is no declared actor, naming the state, the src and the declared actors", () => {
    let error: unknown;
    try {
      machineOf(
        {
          initial: "labelling",
          states: {
            labelling: {
              invoke: { src: "labeller", input: { prompt: "Label it." } },
              on: { finish: "done", "agent.fault": "done" },
            },
            done: { type: "final" },
          },
        },
        { labeler: agent({ model: "m", instructions: "Label." }) },
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Jr2Error);
    expect((error as Jr2Error).code).toBe("JR2_ERR_SETUP_INVOKE_SRC_UNKNOWN");
    expect((error as Jr2Error).message).toContain("labelling");
    expect((error as Jr2Error).message).toContain("`labeller`");
    expect((error as Jr2Error).message).toContain("labeler, gate");
  });

  it("an action that throws at runtime faults its run (reason kept, saved) and the host serves other runs", async () => {
    const broken = machineOf({
      initial: "a",
      states: {
        a: {
          entry: () => {
            throw new Error("the author's action broke");
          },
        },
      },
    });
    const { host, store } = await hostWith(broken);
    const { runId } = await host.startRun("broken", {});
    expect(await host.getRun(runId)).toMatchObject({
      status: "faulted",
      fault: { reason: expect.stringContaining("the author's action broke") },
    });
    expect((await store.load(runId))?.status).toBe("faulted");
    const other = await host.startRun("healthy", {});
    expect((await host.getRun(other.runId)).status).toBe("running");
    await host.close();
  });

  it("a child that errors faults the run and the host keeps serving", async () => {
    const broken = machineOf(
      { initial: "a", states: { a: { invoke: { src: "failing" } } } },
      { failing: fromPromise(async () => Promise.reject(new Error("the child broke"))) },
    );
    const { host, store } = await hostWith(broken);
    const { runId } = await host.startRun("broken", {});
    const run = await host.getRun(runId);
    expect(run.status).toBe("faulted");
    expect(run.fault?.reason).toContain("the child broke");
    expect((await store.load(runId))?.status).toBe("faulted");
    expect((await host.getRun((await host.startRun("healthy", {})).runId)).status).toBe("running");
    await host.close();
  });

  it("an unknown actor reached at runtime (spawned by name) faults the run as data, never an uncaught exception", async () => {
    // The same kind as the typo, out of createMachine's sight: a snapshot xstate cannot persist.
    const broken = machineOf({ initial: "a", states: { a: { entry: spawnChild("labeller" as never) } } });
    const { host, store } = await hostWith(broken);
    const { runId } = await host.startRun("broken", {});
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect((await host.getRun(runId)).status).toBe("faulted");
    expect((await host.getRun(runId)).fault?.reason).toBeTruthy();
    expect((await store.load(runId))?.status).toBe("faulted");
    expect((await host.getRun((await host.startRun("healthy", {})).runId)).status).toBe("running");
    await host.close();
  });
});
