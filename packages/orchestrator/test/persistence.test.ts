/**
 * When a run is saved (SPEC §8, ADR-0250): a pick's effect only with its answer, effects that
 * leave the process only after their state committed, a shutdown that saves nothing more.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore, type RunBlob, type RunStore } from "../src/durability/store/run-store.js";
import { createRunHost, defineEvent, INSTANCE_CALLER, type TurnDriver } from "../src/index.js";
import { oneTurnMachine } from "./helpers.js";

const _finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
const machine = oneTurnMachine();

/** A memory store whose saves carrying a pick answer never commit (the process dies first). */
function storeThatDiesOnPickSave() {
  const inner = createMemoryStore();
  const store: RunStore = {
    ...inner,
    save: (blob, picks) => (picks?.length ? new Promise<void>(() => {}) : inner.save(blob, picks)),
  };
  return { store, inner };
}

/** Records driver starts and stops in order with the value committed at that moment. */
function witnessDriver(inner: RunStore) {
  const seen: string[] = [];
  const committed = async () => {
    const [only] = await inner.list();
    const blob = only ? await inner.load(only.runId) : undefined;
    return (blob?.snapshot as { value?: string } | undefined)?.value;
  };
  const driver: TurnDriver = {
    start() {
      void committed().then((v) => seen.push(`start@${v}`));
      return () => void committed().then((v) => seen.push(`stop@${v}`));
    },
  };
  return { driver, seen };
}

describe("saving a run (§8, ADR-0250)", () => {
  it("never commits a pick's effect without its answer: a crash before that commit leaves the run as before the pick", async () => {
    const { store, inner } = storeThatDiesOnPickSave();
    const host = createRunHost({ workflows: new Map([["one", machine]]), store });
    const { runId } = await host.startRun("one", {});
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    const answered = host.deliverPick(iid, INSTANCE_CALLER, {
      name: "finish",
      arguments: {},
      toolCallId: "c1",
    });
    let told = false;
    void answered.then(() => (told = true));
    // Let every background save of the post-pick state run.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(told).toBe(false);
    const saved = (await inner.load(runId)) as RunBlob;
    expect((saved.snapshot as { value: string }).value).toBe("working");
    expect(saved.status).toBe("running");
    expect(await inner.pickAnswer(runId, { iid, toolCallId: "c1" })).toBeUndefined();
  });

  it("starts a Turn's driver only after its state committed, and stops it only after the exit committed", async () => {
    const inner = createMemoryStore();
    const { driver, seen } = witnessDriver(inner);
    const host = createRunHost({ workflows: new Map([["one", machine]]), store: inner, turnDriver: driver });
    const { runId } = await host.startRun("one", {});
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    await host.deliverPick(iid, INSTANCE_CALLER, { name: "finish", arguments: {}, toolCallId: "c1" });
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(["start@working", "stop@done"]);
    await host.close();
  });

  it("saves nothing after shutdown begins: the stop is not the run's state, and the run stays live in the store", async () => {
    const inner = createMemoryStore();
    const host = createRunHost({
      workflows: new Map([["one", machine]]),
      store: { ...inner, close: async () => {} },
    });
    const { runId } = await host.startRun("one", {});
    await host.close();
    const saved = (await inner.load(runId)) as RunBlob;
    expect(saved.status).toBe("running");
    expect((saved.snapshot as { status: string }).status).toBe("active");
    await expect(
      host.deliverPick("x/y", INSTANCE_CALLER, { name: "finish", arguments: {}, toolCallId: "c" }),
    ).rejects.toMatchObject({
      code: "JR2_ERR_SERVICE_STOPPING",
    });
  });
});
