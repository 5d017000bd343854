/**
 * Regression (hostile pass, kill -9 of the Harness mid-Turn with no restart): the Turn's stream
 * reads fail in transport (ECONNREFUSED) for ever, and the Agent actor backs off and reconnects
 * "without deadline" (turns/follow.ts `follow`): no feed line, no warn, no fault — the run sits
 * silent until the Turn deadline (1 h by default) and then faults `deadline`, not `infra` /
 * `unavailable` naming the Harness. A home-lab user sees a run that says nothing for an hour.
 * Decided (seed ADR-0016 wins over a new bound: "wait reconnects from the offset ledger without a
 * deadline"; a Harness that comes back answers 404 and the Turn goes on on a new conversation):
 * the Turn keeps reading, but never in silence — a feed `retry` line naming the Harness URL and
 * a warn when the outage starts, again once a minute while it lasts; no fault before the Turn
 * deadline. Fixed in turns/follow.ts `sayHarnessUnreachable`.
 */
import type { PickAnswer } from "@jr2/wire";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type LedgerEntry, startTurn, type TurnPorts } from "../../src/turns/agent-actor.js";
import type { HarnessClient } from "../../src/turns/harness-client.js";
import { createOutboundQueues } from "../../src/turns/outbound-queue.js";

afterEach(() => vi.useRealTimers());

describe("a Harness that dies mid-Turn and stays down", () => {
  it("says on the feed, once a minute, that it waits for the Harness — and faults nothing before the deadline", async () => {
    vi.useFakeTimers();
    const client: HarnessClient = {
      endpoint: { url: "http://127.0.0.1:7999", token: "t" },
      admit: async () => ({
        kind: "admitted",
        admission: { submissionId: "s1", offset: "0", streamUrl: "/c/run-1/coder" },
      }),
      // The Harness was killed right after the admission: every read is refused.
      read: async () => ({ kind: "transport", error: "ECONNREFUSED" }),
      abort: async () => ({ ok: false, error: "ECONNREFUSED" }),
      health: async () => ({ kind: "unreachable", error: "ECONNREFUSED" }),
    } as unknown as HarnessClient;
    const faults: Array<{ reason: string; detail?: string; cause?: string }> = [];
    const said: Array<{ reason?: string; message?: string }> = [];
    const warns: string[] = [];
    const ledger = new Map<string, LedgerEntry>();
    let open = true;
    const ports: TurnPorts = {
      input: {
        agentName: "coder",
        iid: "run-1/coder",
        turnId: "turn-1",
        tools: ["finish"],
        prompt: "Implement it.",
        continuation: true,
      },
      definition: { model: "m", instructions: "You code.", workspace: "none" },
      client,
      outbound: createOutboundQueues(),
      config: {
        nudgeBudget: 2,
        deadlineMs: 60 * 60_000,
        pollWaitSeconds: 20,
        backoffMinMs: 500,
        backoffMaxMs: 15_000,
        admitWindowMs: 1_000,
      },
      allowed: () => (open ? ["finish"] : []),
      isOpen: () => open,
      atRest: () => true,
      lastAnswer: () => undefined as { pick: string; answer: PickAnswer } | undefined,
      watch: () => () => {},
      ledgerRead: (iid) => ledger.get(iid),
      ledgerWrite: async (iid, entry) => void ledger.set(iid, entry),
      reseat: () => "run-1/coder/1",
      telemetry: (event) => {
        if (event.type === "retry") said.push({ reason: event.reason, message: event.message });
      },
      fault: (reason, detail, cause) => {
        faults.push({ reason, ...(detail ? { detail } : {}), ...(cause ? { cause } : {}) });
        open = false;
      },
      log: (level, msg) => {
        if (level === "warn") warns.push(msg);
      },
      setTimeout: (fn, ms) => setTimeout(fn, ms),
      clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
      random: () => 0.5,
    } as TurnPorts;
    startTurn(ports);
    // Ten minutes of a Harness refusing every connection (the Turn deadline is an hour).
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(faults).toEqual([]);
    // Once at the start of the outage, then once a minute (to the next backoff): 9–11 lines in ten minutes.
    expect(said.length).toBeGreaterThanOrEqual(9);
    expect(said.length).toBeLessThanOrEqual(11);
    expect(said[0]).toMatchObject({ reason: "waiting for the Harness" });
    expect(said[0]?.message).toContain("http://127.0.0.1:7999");
    expect(said[0]?.message).toContain("ECONNREFUSED");
    expect(warns.length).toBe(said.length);
  });
});
