import type { PickAnswer, StreamEvent, SubmissionRequest } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { type LedgerEntry, startTurn, type TurnPorts, type TurnTelemetry } from "../src/turns/agent-actor.js";
import type { AdmitResult, HarnessClient, ReadResult } from "../src/turns/harness-client.js";
import { createOutboundQueues } from "../src/turns/outbound-queue.js";
import type { TurnInput } from "../src/xstate/run-binding.js";

import { fakeHarness, fakeTurn, tick, until } from "./agent-actor-fixture.js";

describe("the Agent actor's Turn mechanics (§5)", () => {
  it("admits the task, ledgers the admission before following, and ends quietly when a pick ends the Turn", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    const turn = startTurn(t.ports);
    await until(() => t.ledger.has("run-1/coder"));
    expect(h.admissions()[0]).toMatchObject({ kind: "task", prompt: "Implement it.", turnId: "turn-1" });
    expect(h.admissions()[0]?.kept).toBeUndefined(); // a first Turn: no conversation to keep yet
    t.state.open = false; // the pick moved the Machine on
    h.settle("run-1/coder", "s1", "completed");
    await turn.done;
    expect(t.faults).toEqual([]);
    expect(h.admissions()).toHaveLength(1);
  });

  it("C5: nudges with picks left, kept:true, and faults no-signal when the budget (2) is spent", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    const turn = startTurn(t.ports);
    for (let i = 1; i <= 3; i++) {
      await until(() => h.admissions().length === i && t.ledger.get("run-1/coder")?.submissionId === `s${i}`);
      h.settle("run-1/coder", `s${i}`, "completed");
    }
    await turn.done;
    const kinds = h.admissions().map((a) => [a.kind, a.kept ?? false]);
    expect(kinds).toEqual([
      ["task", false],
      ["nudge", true],
      ["nudge", true],
    ]);
    expect(t.faults.map((f) => f.reason)).toEqual(["no-signal"]);
  });

  it("C5: a model that stopped with no Allowed picks is not asked until a pick opens, then woken once", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    t.state.allowed = [];
    startTurn(t.ports);
    await until(() => t.ledger.has("run-1/coder"));
    h.settle("run-1/coder", "s1", "completed");
    await tick();
    await tick();
    expect(h.admissions()).toHaveLength(1); // nothing said to a model with nothing to pick
    t.change({ allowed: ["finish"] }); // the Gate opened a pick
    await until(() => h.admissions().length === 2);
    expect(h.admissions()[1]).toMatchObject({ kind: "nudge", kept: true });
    t.change({ allowed: ["finish"] });
    await tick();
    expect(h.admissions()).toHaveLength(2);
  });

  it("a Turn that ended while waiting for a pick to open is never woken", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    t.state.allowed = [];
    const turn = startTurn(t.ports);
    await until(() => t.ledger.has("run-1/coder"));
    h.settle("run-1/coder", "s1", "completed");
    await tick();
    turn.stop();
    t.change({ open: false, allowed: ["finish"] });
    await turn.done;
    expect(h.admissions()).toHaveLength(1);
  });

  it("a runaway settlement faults with reason runaway; another failure is infra with its message", async () => {
    for (const [type, reason] of [
      ["runaway", "runaway"],
      ["provider", "infra"],
    ] as const) {
      const h = fakeHarness();
      const t = fakeTurn(h);
      const turn = startTurn(t.ports);
      await until(() => t.ledger.has("run-1/coder"));
      h.settle("run-1/coder", "s1", "failed", { type, message: `${type} happened` });
      await turn.done;
      expect(t.faults).toEqual([{ reason, detail: `${type} happened` }]);
    }
  });

  it("a lost conversation is admitted again on a new one with its task and a conversation-new notice", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    startTurn(t.ports);
    await until(() => t.ledger.has("run-1/coder"));
    h.lose("run-1/coder");
    await until(() => h.admissions().length === 2);
    const second = h.calls.filter((c) => c.op === "admit")[1]!;
    expect(second.iid).toBe("run-1/coder/1");
    expect(second.body).toMatchObject({
      kind: "task",
      prompt: "Implement it.",
      notices: [{ type: "conversation-new" }],
    });
    expect(second.body?.kept).toBeUndefined();
  });

  it("a Turn cut by a Harness restart while its state works waits for Rest, then is admitted with its last pick's answer (§5.6)", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    startTurn(t.ports);
    await until(() => t.ledger.has("run-1/coder"));
    const answer: PickAnswer = { delivered: true, moved: true, turnComplete: false, allowed: [] };
    t.state.last = { pick: "dispute", answer };
    t.state.rest = false; // the in-state pick started work below the state
    h.lose("run-1/coder");
    await tick();
    await tick();
    expect(h.admissions()).toHaveLength(1); // nothing admitted while the state works
    t.change({ rest: true });
    await until(() => h.admissions().length === 2);
    expect(h.admissions()[1]).toMatchObject({
      kind: "task",
      prompt: "Implement it.",
      notices: [{ type: "conversation-new" }, { type: "pick-answer", pick: "dispute", answer }],
    });
    expect(t.faults).toEqual([]);
  });

  it("stop aborts the Submission remotely, and the abort reaches the Harness before the next Turn's admission", async () => {
    const h = fakeHarness();
    const a = fakeTurn(h);
    const outbound = a.ports.outbound;
    const first = startTurn(a.ports);
    await until(() => a.ledger.has("run-1/coder"));
    first.stop();
    const b = fakeTurn(h, { turnId: "turn-2", prompt: "Fix it." });
    b.ports.outbound = outbound;
    b.ports.ledgerRead = (iid) => a.ledger.get(iid); // the same run's ledger
    startTurn(b.ports);
    await until(() => h.admissions().length === 2);
    expect(h.calls.map((c) => c.op)).toEqual(["admit", "abort", "admit"]);
    expect(h.admissions()[1]).toMatchObject({ kind: "task", prompt: "Fix it.", kept: true });
  });

  it("after the Turn ended, the Submission's last usage still reaches the telemetry (a bounded drain)", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    const turn = startTurn(t.ports);
    await until(() => t.ledger.has("run-1/coder"));
    t.state.open = false;
    turn.stop(); // the pick ended the Turn; its model request's usage comes after
    h.push("run-1/coder", {
      type: "usage",
      submissionId: "s1",
      promptTokens: 90,
      cachedTokens: 80,
      completionTokens: 5,
    });
    h.settle("run-1/coder", "s1", "aborted");
    await turn.done;
    expect(t.telemetry).toContainEqual(
      expect.objectContaining({ type: "usage", promptTokens: 90, cachedTokens: 80, completionTokens: 5 }),
    );
    expect(t.faults).toEqual([]);
  });

  it("a shutdown stop leaves the Submission running for restore (no abort)", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    const turn = startTurn(t.ports);
    await until(() => t.ledger.has("run-1/coder"));
    turn.stop({ shutdown: true });
    await turn.done;
    expect(h.calls.map((c) => c.op)).toEqual(["admit"]);
  });

  it("re-attaches to a ledgered admission with the same turnId instead of admitting again", async () => {
    const h = fakeHarness();
    await h.client.admit("run-1/coder", {
      agent: "coder",
      kind: "task",
      definition: { model: "m", instructions: "", workspace: "none" },
      prompt: "x",
    });
    const t = fakeTurn(h);
    t.ledger.set("run-1/coder", { turnId: "turn-1", submissionId: "s1", offset: "0", streamUrl: "" });
    t.state.open = true;
    const turn = startTurn(t.ports);
    await tick();
    t.state.open = false;
    h.settle("run-1/coder", "s1", "completed");
    await turn.done;
    expect(h.admissions()).toHaveLength(1); // only the one made before the "crash"
  });

  it("never re-attaches to an admission with another Turn's turnId: the prompt is admitted again", async () => {
    const h = fakeHarness();
    await h.client.admit("run-1/coder", {
      agent: "coder",
      kind: "task",
      definition: { model: "m", instructions: "", workspace: "none" },
      prompt: "x",
    });
    const t = fakeTurn(h, { turnId: "turn-2", prompt: "Fix it." });
    t.ledger.set("run-1/coder", { turnId: "turn-1", submissionId: "s1", offset: "0", streamUrl: "" });
    startTurn(t.ports);
    await until(() => h.admissions().length === 2);
    expect(h.admissions()[1]).toMatchObject({
      kind: "task",
      prompt: "Fix it.",
      turnId: "turn-2",
      kept: true,
    });
  });

  it("re-sends an admission that provably never left the host, and never one that may have arrived", async () => {
    const h = fakeHarness();
    h.admitScript.push({ kind: "unsent", error: "ECONNREFUSED" });
    const t = fakeTurn(h);
    startTurn(t.ports);
    await until(() => t.ledger.has("run-1/coder"));
    expect(h.admissions()).toHaveLength(2);
    expect(t.telemetry.some((e) => e.type === "retry")).toBe(true);

    const h2 = fakeHarness();
    h2.admitScript.push({ kind: "unknown", error: "ECONNRESET" });
    const t2 = fakeTurn(h2);
    const turn2 = startTurn(t2.ports);
    await turn2.done;
    expect(h2.admissions()).toHaveLength(1);
    expect(t2.faults[0]?.reason).toBe("infra");
  });

  it("past its deadline the Turn is aborted; the aborted settlement's Worktree commit is recorded, then it faults with reason deadline (ADR-0219)", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    const seen: string[] = [];
    t.ports.config = { ...t.ports.config, deadlineMs: 30 };
    t.ports.recordCommits = (commits) => seen.push(`commit ${commits["code/app"]}`);
    const fault = t.ports.fault;
    t.ports.fault = (reason, detail, cause) => {
      seen.push(`fault ${reason}`);
      fault(reason, detail, cause);
    };
    startTurn(t.ports);
    await until(() => h.calls.some((c) => c.op === "abort"));
    // The Harness answered that it aborted a running Submission: the fault waits for its settlement.
    await new Promise((r) => setTimeout(r, 50));
    expect(t.faults).toEqual([]);
    const commit = "c".repeat(40);
    h.push("run-1/coder", {
      type: "submission-settled",
      submissionId: "s1",
      outcome: "aborted",
      commit: { "code/app": commit },
    });
    await until(() => t.faults.length === 1);
    expect(t.faults[0]?.reason).toBe("deadline");
    expect(seen).toEqual([`commit ${commit}`, "fault deadline"]);
  });

  it("usage of the Submission reaches the telemetry, without iids", async () => {
    const h = fakeHarness();
    const t = fakeTurn(h);
    const turn = startTurn(t.ports);
    await until(() => t.ledger.has("run-1/coder"));
    h.push("run-1/coder", {
      type: "usage",
      submissionId: "s1",
      promptTokens: 100,
      cachedTokens: 64,
      completionTokens: 7,
    });
    t.state.open = false;
    h.settle("run-1/coder", "s1", "completed");
    await turn.done;
    expect(t.telemetry).toContainEqual(
      expect.objectContaining({ type: "usage", promptTokens: 100, cachedTokens: 64, completionTokens: 7 }),
    );
    expect(JSON.stringify(t.telemetry)).not.toContain("run-1/coder");
  });
});
