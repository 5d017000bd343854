/**
 * What the run-ownership tests share (ADR-0280, ADR-0283): the one-Agent workflow they run, the
 * short lease they run it under, and a run started with its Turn's admission ledgered in the
 * shared store. Used by ownership-suite.ts and regressions/lease-own-clock-lapse.test.ts.
 */
import type { RunStore } from "../src/index.js";
import type { FakeHarness } from "./fake-harness-server.js";
import { type hostOn, oneCoderMachine, until } from "./host-on-fake-harness.js";

/** `work` (the coder's Turn; `finish` → done, a fault → failed). */
export const machine = oneCoderMachine("ownership");

/** The lease the tests run under, ms: short, so an adoption comes within a test. */
export const LEASE_MS = 600;

/** Starts a run on `host` and waits until its Turn's admission is ledgered in the shared store. */
export async function runWithLiveTurn(
  host: ReturnType<typeof hostOn>,
  fake: FakeHarness,
  reader: RunStore,
): Promise<{ runId: string; iid: string }> {
  const { runId } = await host.startRun("w", {});
  await until("the admission ledgered", async () => {
    const blob = await reader.load(runId);
    return fake.admissions.length === 1 && Object.keys(blob?.ledger ?? {}).length === 1;
  });
  const iid = Object.keys((await reader.load(runId))!.ledger)[0]!;
  return { runId, iid };
}
