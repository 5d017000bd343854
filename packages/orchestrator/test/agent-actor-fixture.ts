/**
 * The Agent actor's test fixture: a fake Harness (records admissions and aborts in order,
 * settles Submissions when the test says so) and a Turn's ports around it, shared by the Turn
 * mechanics tests (agent-actor.test.ts) and the Harness-restart ones (agent-actor-restart.test.ts).
 */
import type { PickAnswer, StreamEvent, SubmissionRequest } from "@jr2/wire";
import { expect } from "vitest";
import type { LedgerEntry, TurnPorts, TurnTelemetry } from "../src/turns/agent-actor.js";
import type { AdmitResult, HarnessClient, ReadResult } from "../src/turns/harness-client.js";
import { createOutboundQueues } from "../src/turns/outbound-queue.js";
import type { TurnInput } from "../src/xstate/run-binding.js";

/** A fake Harness: records calls in order, settles Submissions when the test says so. */
export function fakeHarness() {
  const calls: Array<{ op: "admit" | "abort"; iid: string; body?: SubmissionRequest }> = [];
  const streams = new Map<string, StreamEvent[]>();
  const lost = new Set<string>();
  const admitScript: AdmitResult[] = [];
  let waiters: Array<() => void> = [];
  let n = 0;
  const wakeAll = () => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  const client: HarnessClient = {
    endpoint: { url: "http://127.0.0.1:1", token: "t" },
    async admit(iid, body) {
      calls.push({ op: "admit", iid, body });
      const scripted = admitScript.shift();
      if (scripted) return scripted;
      if (body.kept && !streams.has(iid)) return { kind: "lost" };
      const log = streams.get(iid) ?? [];
      streams.set(iid, log);
      const submissionId = `s${++n}`;
      return {
        kind: "admitted",
        admission: { submissionId, offset: String(log.length), streamUrl: `/c/${iid}` },
      };
    },
    async read(iid, offset, _wait, signal): Promise<ReadResult> {
      for (;;) {
        if (lost.has(iid)) return { kind: "lost" };
        const log = streams.get(iid);
        if (!log) return { kind: "lost" };
        const from = Number(offset);
        if (log.length > from)
          return { kind: "events", events: log.slice(from), nextOffset: String(log.length) };
        if (signal?.aborted) return { kind: "transport", error: "aborted" };
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          signal?.addEventListener("abort", () => resolve(), { once: true });
        });
      }
    },
    async abort(iid) {
      calls.push({ op: "abort", iid });
      return { ok: true, aborted: true };
    },
  };
  return {
    client,
    calls,
    admitScript,
    admissions: () => calls.filter((c) => c.op === "admit").map((c) => c.body!),
    push(iid: string, event: StreamEvent) {
      streams.get(iid)!.push(event);
      wakeAll();
    },
    settle(
      iid: string,
      submissionId: string,
      outcome: "completed" | "failed" | "aborted",
      error?: { type: string; message: string },
    ) {
      streams
        .get(iid)!
        .push({ type: "submission-settled", submissionId, outcome, ...(error ? { error } : {}) });
      wakeAll();
    },
    lose(iid: string) {
      lost.add(iid);
      wakeAll();
    },
  };
}

/** A fake Machine seat: the Allowed picks and whether the Turn is open, changed by the test. */
export function fakeTurn(harness: ReturnType<typeof fakeHarness>, overrides: Partial<TurnInput> = {}) {
  const input: TurnInput = {
    agentName: "coder",
    iid: "run-1/coder",
    turnId: "turn-1",
    tools: ["finish"],
    prompt: "Implement it.",
    continuation: true,
    ...overrides,
  };
  const state = {
    allowed: ["finish"],
    open: true,
    rest: true,
    last: undefined as { pick: string; answer: PickAnswer } | undefined,
  };
  const watchers = new Set<() => void>();
  const ledger = new Map<string, LedgerEntry>();
  const telemetry: TurnTelemetry[] = [];
  const faults: Array<{ reason: string; detail?: string }> = [];
  const order: string[] = [];
  let epoch = 0;
  const ports: TurnPorts = {
    input,
    definition: { model: "m", instructions: "You code.", workspace: "write" },
    client: harness.client,
    outbound: createOutboundQueues(),
    config: {
      nudgeBudget: 2,
      deadlineMs: 60_000,
      pollWaitSeconds: 1,
      backoffMinMs: 1,
      backoffMaxMs: 2,
      admitWindowMs: 1_000,
    },
    allowed: () => (state.open ? state.allowed : []),
    isOpen: () => state.open,
    atRest: () => state.rest,
    lastAnswer: () => state.last,
    watch(onChange) {
      watchers.add(onChange);
      return () => watchers.delete(onChange);
    },
    ledgerRead: (iid) => ledger.get(iid),
    async ledgerWrite(iid, entry) {
      order.push(`ledger:${entry.submissionId}`);
      ledger.set(iid, entry);
    },
    reseat() {
      epoch++;
      return `${input.iid}/${epoch}`;
    },
    telemetry: (e) => telemetry.push(e),
    fault: (reason, detail) => {
      faults.push({ reason, ...(detail ? { detail } : {}) });
      state.open = false;
    },
    log: () => {},
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    random: () => 0.5,
  };
  return {
    ports,
    state,
    ledger,
    telemetry,
    faults,
    order,
    change(patch: Partial<typeof state>) {
      Object.assign(state, patch);
      for (const w of [...watchers]) w();
    },
  };
}

export const tick = () => new Promise((r) => setTimeout(r, 5));
export async function until(cond: () => boolean) {
  for (let i = 0; i < 400 && !cond(); i++) await tick();
  expect(cond()).toBe(true);
}
