/**
 * Issue 27 in the Agent actor (ADR-0175), on a fake Harness: a `harness-restarted` settlement
 * is admitted again on the same conversation after Rest, spending no budget; a 404 on a `kept`
 * admission pushes the kept history once — and an older Harness that ignores it (404 again)
 * sends the Turn to a new conversation, the feed saying why; an older Harness that never
 * streams `history` leaves nothing to push (skew both ways).
 */
import type { ConversationHistory, PickAnswer, StreamEvent, SubmissionRequest } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { type LedgerEntry, startTurn, type TurnPorts, type TurnTelemetry } from "../src/turns/agent-actor.js";
import type { AdmitResult, HarnessClient, ReadResult } from "../src/turns/harness-client.js";
import { createOutboundQueues } from "../src/turns/outbound-queue.js";
import type { TurnInput } from "../src/xstate/run-binding.js";

import { fakeHarness, fakeTurn, tick, until } from "./agent-actor-fixture.js";

const HISTORY: ConversationHistory = {
  submissions: [{ submissionId: "s0", messages: '[{"role":"user"}]', sha256: "a".repeat(64) }],
};
const retries = (t: ReturnType<typeof fakeTurn>) =>
  t.telemetry.filter((e) => e.type === "retry").map((e) => (e as { reason: string }).reason);

describe("the Agent actor across a Harness restart (issue 27)", () => {
  it("a harness-restarted settlement is admitted again on the same conversation after Rest, with readmitted and the pick's answer", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    startTurn(t.ports);
    await until(() => t.ledger.has("run-1/coder"));
    const answer: PickAnswer = { delivered: true, moved: true, turnComplete: false, allowed: [] };
    t.state.last = { pick: "dispute", answer };
    t.state.rest = false;
    h.settle("run-1/coder", "s1", "failed", { type: "harness-restarted", message: "restarted" });
    await tick();
    await tick();
    expect(h.admissions()).toHaveLength(1); // nothing admitted while the state works
    t.change({ rest: true });
    await until(() => h.admissions().length === 2);
    const second = h.calls.filter((c) => c.op === "admit")[1]!;
    expect(second.iid).toBe("run-1/coder");
    expect(second.body).toMatchObject({
      kind: "task",
      prompt: "Implement it.",
      kept: true,
      notices: [{ type: "readmitted" }, { type: "pick-answer", pick: "dispute", answer }],
    });
    expect(t.faults).toEqual([]);
    expect(retries(t)).toEqual(["the Harness restarted; the Turn is admitted again on its conversation"]);
  });

  it("a Harness restarting in every Submission faults the Turn after three re-admissions", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    startTurn(t.ports);
    for (let n = 1; n <= 4; n++) {
      await until(() => h.admissions().length === n);
      await until(() => t.ledger.get("run-1/coder")?.submissionId === `s${n}`);
      h.settle("run-1/coder", `s${n}`, "failed", { type: "harness-restarted", message: "restarted" });
    }
    await until(() => t.faults.length === 1);
    expect(t.faults[0]?.reason).toBe("infra");
    expect(t.faults[0]?.detail).toContain("restarted during this Turn 4 times");
    expect(h.admissions()).toHaveLength(4);
  });

  it("a kept admission answered 404 is sent again with the kept history, on the same conversation", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h, { turnId: "turn-2", prompt: "Fix it." });
    t.ledger.set("run-1/coder", { turnId: "turn-1", submissionId: "s0", offset: "3", streamUrl: "/c" });
    t.ports.historyOf = () => HISTORY;
    // The Harness lost it; given the history it rebuilds it (admits).
    h.admitScript.push(
      { kind: "lost" },
      { kind: "admitted", admission: { submissionId: "s9", offset: "0", streamUrl: "/c" } },
    );
    const turn = startTurn(t.ports);
    await until(() => t.ledger.get("run-1/coder")?.submissionId === "s9");
    turn.stop();
    const [first, second] = h.calls.filter((c) => c.op === "admit");
    expect(first?.body).toMatchObject({ kind: "task", kept: true });
    expect(first?.body?.history).toBeUndefined();
    expect(second?.iid).toBe("run-1/coder");
    expect(second?.body).toMatchObject({ kind: "task", prompt: "Fix it.", kept: true, history: HISTORY });
  });

  it("an older Harness ignores the pushed history (404 again): the Turn goes to a new conversation and the feed says why", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h, { turnId: "turn-2", prompt: "Fix it." });
    t.ledger.set("run-1/coder", { turnId: "turn-1", submissionId: "s0", offset: "3", streamUrl: "/c" });
    t.ports.historyOf = () => HISTORY;
    h.admitScript.push({ kind: "lost" }, { kind: "lost" });
    startTurn(t.ports);
    await until(() => h.admissions().length === 3);
    const third = h.calls.filter((c) => c.op === "admit")[2]!;
    expect(third.iid).toBe("run-1/coder/1");
    expect(third.body).toMatchObject({ kind: "task", notices: [{ type: "conversation-new" }] });
    expect(third.body?.history).toBeUndefined();
    expect(retries(t)).toEqual(["conversation lost and its pushed history not taken; admitted on a new one"]);
  });

  it("an older Harness streams no history: nothing is pushed, and the loss says no history was kept", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h, { turnId: "turn-2", prompt: "Fix it." });
    t.ledger.set("run-1/coder", { turnId: "turn-1", submissionId: "s0", offset: "3", streamUrl: "/c" });
    t.ports.historyOf = () => undefined;
    h.admitScript.push({ kind: "lost" });
    startTurn(t.ports);
    await until(() => h.admissions().length === 2);
    expect(h.calls.filter((c) => c.op === "admit")[1]?.iid).toBe("run-1/coder/1");
    expect(retries(t)).toEqual([
      "conversation lost (no byte-exact history kept of it); admitted on a new one",
    ]);
  });

  it("history stream events are kept through the port, each once", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    const kept: Array<{ iid: string; sha256: string }> = [];
    t.ports.recordHistory = (iid, part) => kept.push({ iid, sha256: part.sha256 });
    startTurn(t.ports);
    await until(() => t.ledger.has("run-1/coder"));
    h.push("run-1/coder", { type: "history", submissionId: "s1", messages: "[]", sha256: "b".repeat(64) });
    t.state.open = false;
    h.settle("run-1/coder", "s1", "completed");
    await until(() => kept.length === 1);
    expect(kept).toEqual([{ iid: "run-1/coder", sha256: "b".repeat(64) }]);
  });
});
