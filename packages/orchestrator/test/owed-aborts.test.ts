/**
 * Owed aborts (owed-aborts-suite.ts): re-sent by an adopting instance on the shared-store double,
 * and by a restart on one memory store.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../src/index.js";
import { startFakeHarness } from "./fake-harness-server.js";
import { until } from "./host-on-fake-harness.js";
import { cleanups, firstTurnEnded, host, owedAbortsSuite, sent } from "./owed-aborts-suite.js";
import { doubleBackend } from "./shared-store.js";

owedAbortsSuite(doubleBackend);

describe("owed aborts after a restart (ADR-0280)", () => {
  it("a restart sends the owed abort before the next admission on that iid", async () => {
    const fake = await startFakeHarness({ script: () => ({ kind: "events", events: [] }) });
    cleanups.push(() => fake.close());
    const store = createMemoryStore();
    const a = host(fake, store, true);
    const { iid } = await firstTurnEnded(a, fake, store);
    await a.close();
    const b = host(fake, store);
    await b.restore();
    await until("the restored host admits the second Turn", () => sent(fake, iid).length === 3);
    expect(sent(fake, iid)).toEqual(["admit -", "abort -", "admit -"]);
  });
});
