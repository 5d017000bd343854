// The convoy (ADR-0432): members that take a request every < 30 s never idle out, so nothing
// leaves the working set. `maxWaitS` let the head waiter in over budget after 300 s, and that
// entry counted as the set changing, so the next waiter's 300 s started again: the 6th queued
// conversation waited 1,800 s. A waiter passed over (someone entered past it over budget, or
// from behind it) now counts `maxWaitS` from its first attempt alone; entries never restart it.
import { describe, expect, it } from "vitest";
import { AimdBudget } from "../../src/provider/scheduling/kv-budget.js";
import { WorkingSet } from "../../src/provider/scheduling/working-set.js";

const MAX_WAIT_MS = 300_000;

/** Drives a set second by second: every member takes a 1 s request every 20 s, forever. */
function convoy(waiters: number) {
  const clock = { t: 0 };
  const set = new WorkingSet({
    endpoint: "http://gpu:8000/v1",
    budget: new AimdBudget(1000, () => clock.t),
    now: () => clock.t,
    maxWaitMs: MAX_WAIT_MS,
  });
  const waited = new Map<string, number>();
  const nextRequestAt = new Map<string, number>();
  const busy = new Set<string>();
  const ask = (c: string) => {
    busy.add(c);
    void set.enter(c, 900).then((o) => {
      if (!waited.has(c)) waited.set(c, o.waitedMs);
      nextRequestAt.set(c, clock.t + 1_000); // its request runs 1 s
    });
  };
  return {
    waited,
    async run(untilMs: number) {
      ask("hog");
      await Promise.resolve();
      for (let i = 1; i <= waiters; i++) {
        clock.t = i * 1_000;
        ask(`w${i}`);
      }
      for (; clock.t < untilMs; clock.t += 1_000) {
        for (const [c, at] of nextRequestAt) {
          if (clock.t < at) continue;
          if (busy.has(c)) {
            // The request ended; the next one comes 19 s later (a tool runs meanwhile).
            set.ended(c);
            busy.delete(c);
            nextRequestAt.set(c, clock.t + 19_000);
          } else ask(c);
        }
        set.tick();
        await new Promise((r) => setImmediate(r));
      }
    },
  };
}

describe("KV working set: the convoy", () => {
  it("no queued conversation waits much past maxWaitS, however busy the members stay", async () => {
    const c = convoy(6);
    await c.run(2_400_000);
    expect(c.waited.size).toBe(7);
    // Each waiter's first wait: the head's 300 s, the others a tick or so after (not 6 × 300 s).
    for (let i = 1; i <= 6; i++) expect(c.waited.get(`w${i}`)).toBeLessThanOrEqual(MAX_WAIT_MS + 10_000);
  });
});
