/**
 * The owed-aborts suite (issue 15, ADR-0280), run by owed-aborts.test.ts and its PostgreSQL twin: a Turn whose state exited owes its Submission's
 * abort, saved with that state. When the process dies between that commit and sending the
 * abort, whoever restores the run — an adopting instance, or a restart — sends it again before
 * any new admission on that iid.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  agent,
  createHarnessTurnDriver,
  createRunHost,
  defineEvent,
  INSTANCE_CALLER,
  jr2Setup,
  type RunStore,
} from "../src/index.js";
import { createHarnessClient, type HarnessEndpoint } from "../src/turns/harness-client.js";
import { type FakeHarness, startFakeHarness } from "./fake-harness-server.js";
import { quickTurns, until } from "./host-on-fake-harness.js";
import type { SharedBackend } from "./shared-store.js";

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
/** Two Turns on one continued conversation: the second is admitted on the first's iid. */
const machine = jr2Setup({
  events: [finish],
  actors: { coder: agent({ model: "coder", instructions: "You code.", workspace: "none" }) },
}).createMachine({
  initial: "work",
  on: { "agent.fault": ".failed" },
  states: {
    work: {
      invoke: { src: "coder", input: { prompt: "Do the work.", continue: true } },
      on: { finish: "check" },
    },
    check: {
      invoke: { src: "coder", input: { prompt: "Check it.", continue: true } },
      on: { finish: "done" },
    },
    done: { type: "final" },
    failed: { type: "final" },
  },
});

export const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * A host on `fake` over `store`; `dies: true` — its aborts never leave (the process dies right
 * after the commit that owes one), so nothing queued behind them on their iid leaves either.
 */
export function host(fake: FakeHarness, store: RunStore, dies = false) {
  const client = (endpoint: HarnessEndpoint) => {
    const real = createHarnessClient(endpoint);
    return dies ? { ...real, abort: () => new Promise<never>(() => {}) } : real;
  };
  const h = createRunHost({
    workflows: new Map([["w", machine]]),
    store,
    placement: { instanceHarnessUrl: fake.url, workRoot: "/work", allowExplicitEndpoints: false },
    turnDriver: createHarnessTurnDriver({ harnessToken: "t", config: quickTurns, client }),
  });
  cleanups.push(() => h.close());
  return h;
}

/** Runs the first Turn to its pick on `a`: the commit owes its abort, which never leaves. */
export async function firstTurnEnded(a: ReturnType<typeof host>, fake: FakeHarness, store: RunStore) {
  const { runId } = await a.startRun("w", {});
  await until("the first admission ledgered", async () => {
    const blob = await store.load(runId);
    return Object.keys(blob?.ledger ?? {}).length === 1;
  });
  const iid = Object.keys((await store.load(runId))!.ledger)[0]!;
  await a.deliverPick(iid, INSTANCE_CALLER, { name: "finish", toolCallId: "c1" });
  const owing = (await store.load(runId)) as { owedAborts?: unknown };
  expect(owing.owedAborts).toEqual([{ iid, submissionId: "s1", harnessUrl: fake.url }]);
  // Died: neither the abort nor the next Turn's admission on the iid left.
  expect(fake.requests.filter((r) => r.iid === iid && r.call !== "read").map((r) => r.call)).toEqual([
    "admit",
  ]);
  return { runId, iid };
}

/** The calls on `iid` other than reads, with the instance that sent them. */
export const sent = (fake: FakeHarness, iid: string) =>
  fake.requests
    .filter((r) => r.iid === iid && r.call !== "read")
    .map((r) => `${r.call} ${r.instance ?? "-"}`);

/** Owed aborts re-sent by an adopting instance on `backend`. */
export function owedAbortsSuite(backend: SharedBackend): void {
  describe(`owed aborts are persisted and re-sent by whoever restores the run, on ${backend.name} (ADR-0280)`, () => {
    it("an adopting instance sends the owed abort before the next admission on that iid", async () => {
      const fake = await startFakeHarness({ script: () => ({ kind: "events", events: [] }) });
      const { storeA, storeB, reader, done } = await backend.open(600);
      cleanups.push(async () => {
        await done();
        await fake.close();
      });
      const a = host(fake, storeA, true);
      const b = host(fake, storeB);
      await a.restore();
      await b.restore();
      const { runId, iid } = await firstTurnEnded(a, fake, reader);
      cleanups.push(async () => storeA.resume());
      storeA.pause();
      await until("B admits the second Turn", () => sent(fake, iid).length === 3);
      expect(sent(fake, iid)).toEqual(["admit A", "abort B", "admit B"]);
      // Paid: the save of the new admission owes nothing any more.
      await until("no abort owed", async () => !("owedAborts" in ((await reader.load(runId)) ?? {})));
    });
  });
}
