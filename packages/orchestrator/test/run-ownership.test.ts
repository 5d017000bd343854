/** The ownership suite (ownership-suite.ts) on the shared-store double; PostgreSQL: run-ownership-pg.test.ts. */
import { describe, expect, it } from "vitest";
import { INSTANCE_CALLER, type RunStore } from "../src/index.js";
import { startFakeHarness } from "./fake-harness-server.js";
import { hostOn, oneCoderMachine, until } from "./host-on-fake-harness.js";
import { ownershipSuite } from "./ownership-suite.js";
import { createSharedStore, doubleBackend } from "./shared-store.js";

ownershipSuite(doubleBackend);

const machine = oneCoderMachine("shared-store-failing");

describe("a failed save on a shared store that is not the fence (ADR-0253, ADR-0280)", () => {
  it("freezes the run (503 JR2_ERR_STORE_FAILING) and keeps it here, as on SQLite", async () => {
    const fake = await startFakeHarness({ script: () => ({ kind: "events", events: [] }) });
    const shared = createSharedStore({ leaseMs: 600 });
    const view = shared.view("A");
    let failing = false;
    const store = new Proxy(view, {
      get(target, key) {
        if (key === "save" && failing)
          return () => Promise.reject(new Error("connection terminated unexpectedly"));
        return Reflect.get(target, key) as unknown;
      },
    }) as RunStore;
    const a = hostOn(fake, machine, { admitWindowMs: 50 }, store);
    await a.restore();
    const { runId } = await a.startRun("w", {});
    await until(
      "the admission ledgered",
      async () => Object.keys((await shared.base.load(runId))?.ledger ?? {}).length === 1,
    );
    const iid = Object.keys((await shared.base.load(runId))!.ledger)[0]!;
    failing = true;
    await expect(
      a.deliverPick(iid, INSTANCE_CALLER, { name: "finish", toolCallId: "c1" }),
    ).rejects.toMatchObject({
      code: "JR2_ERR_STORE_FAILING",
    });
    expect(a.storeHealth()).toMatchObject({ store: "failing", frozenRuns: 1 });
    expect(shared.leases.get(runId)).toMatchObject({ instanceId: "A" }); // still A's: not let go
    failing = false;
    await until(
      "the frozen run reloaded and live here",
      () => a.storeHealth().frozenRuns === 0 && a.isLive(runId),
    );
    await a.close();
    await fake.close();
  });
});
