/** The CLI's pure parts of run outcomes (ADR-0062): exit codes, `--answer-gates`, `jr2 show`, `jr2 runs`. */
import type { Gate, RunDetail, RunFeedEvent } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { EXIT, exitCodeOf } from "../src/cli/exit-codes.js";
import { settledSummary } from "../src/cli/follow-run.js";
import { answerFor, parseGateAnswers } from "../src/cli/gate-answers.js";
import { describeGate } from "../src/cli/gate-text.js";
import { formatSummary } from "../src/cli/runs-commands.js";
import { formatRun, turnRows } from "../src/cli/show-command.js";

const gate: Gate = {
  id: "confirm_gate",
  path: "human.asking",
  accepts: [
    {
      name: "confirm",
      description: "Confirm it.",
      parameters: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
    },
    { name: "deny", description: "", parameters: { type: "object", properties: {} } },
  ],
  acceptsNow: ["confirm"],
  meta: { question: "Is this report real?", severity: "high" },
};

describe("exit codes", () => {
  it("0 only for succeeded; each other ending its own code", () => {
    expect(exitCodeOf("done", "succeeded")).toBe(0);
    expect(exitCodeOf("done", "failed")).toBe(1);
    expect(exitCodeOf("faulted", "faulted")).toBe(3);
    expect(exitCodeOf("cancelled", "cancelled")).toBe(4);
    expect(exitCodeOf("drifted", undefined)).toBe(5);
    expect(exitCodeOf("running", undefined)).toBe(6);
    // A run stored before outcomes: its status tells.
    expect(exitCodeOf("done", undefined)).toBe(0);
    expect(exitCodeOf("faulted", undefined)).toBe(3);
    expect(EXIT.usage).toBe(2);
  });
});

describe("--answer-gates", () => {
  it("parses [GATE=]EVENT[:JSON], commas inside the payload included", () => {
    expect(parseGateAnswers(['merge_gate=merge,confirm_gate=confirm:{"note":"a, b"}', "approve"])).toEqual([
      { gate: "merge_gate", event: "merge", payload: {} },
      { gate: "confirm_gate", event: "confirm", payload: { note: "a, b" } },
      { event: "approve", payload: {} },
    ]);
  });

  it("refuses a payload that is not a JSON object, naming the entry", () => {
    expect(() => parseGateAnswers(["confirm:[1]"])).toThrow(/`confirm:\[1\]`.*JSON object/);
    expect(() => parseGateAnswers(["confirm:{nope"])).toThrow(/not valid JSON/);
  });

  it("answers a Gate with the first entry naming it (or none) whose event it accepts now", () => {
    const answers = parseGateAnswers(["other_gate=confirm", "deny", 'confirm_gate=confirm:{"note":"x"}']);
    expect(answerFor(gate, answers)).toEqual({
      gate: "confirm_gate",
      event: "confirm",
      payload: { note: "x" },
    });
    expect(answerFor(gate, parseGateAnswers(["deny"]))).toBeUndefined();
  });

  it("a Gate reads as its question, the rest of meta and each accepted event's fields", () => {
    expect(describeGate(gate, "  ")).toEqual([
      "  question: Is this report real?",
      '  meta: {"severity":"high"}',
      "  confirm { note: string } — Confirm it.",
      "  deny (no fields)  (not now)",
    ]);
  });
});

describe("jr2 show and jr2 runs", () => {
  const at = "2026-12-01T10:00:00.000Z";
  const events: RunFeedEvent[] = [
    {
      seq: 0,
      at,
      type: "admission",
      child: "work.triaging#triager",
      agent: "triager",
      kind: "task",
      allowed: ["assign"],
    },
    {
      seq: 1,
      at,
      type: "usage",
      child: "work.triaging#triager",
      promptTokens: 100,
      cachedTokens: 80,
      completionTokens: 5,
    },
    {
      seq: 2,
      at,
      type: "pick",
      child: "work.triaging#triager",
      agent: "triager",
      name: "assign",
      answer: { refusal: "guard" },
    },
    {
      seq: 3,
      at,
      type: "pick",
      child: "work.triaging#triager",
      agent: "triager",
      name: "close",
      answer: { moved: true },
    },
  ];
  const detail: RunDetail = {
    runId: "run-1",
    workflow: "triage",
    status: "done",
    value: { work: "escalated", human: "answered" },
    context: { confirmed: true },
    gates: [],
    turns: [],
    usage: { promptTokens: 100, cachedTokens: 80, completionTokens: 5, requests: 1 },
    updatedAt: at,
    outcome: "failed",
    finalState: { work: "escalated", human: "answered" },
    input: { report: "blank page" },
    faults: [
      {
        agent: "triager",
        state: "work.triaging",
        turnId: "t-1",
        reason: "infra",
        cause: "unavailable",
        detail: "the endpoint is down",
        routed: true,
        at,
      },
    ],
  };

  it("sums each Turn's tokens and lists its picks, a refused one marked", () => {
    expect(turnRows(events)).toEqual([
      {
        child: "work.triaging#triager",
        admissions: 1,
        picks: ["assign✗", "close"],
        prompt: 100,
        cached: 80,
        completion: 5,
      },
    ]);
  });

  it("shows input, outcome, final state, context, faults, Turns and open Gates", () => {
    const text = formatRun({ ...detail, status: "running", gates: [gate] }, events);
    expect(text).toContain("failed, final state work.escalated, human.answered");
    expect(text).toContain('input     {"report":"blank page"}');
    expect(text).toContain('context   {"confirmed":true}');
    expect(text).toContain(
      "work.triaging#triager  infra (cause unavailable)  routed  turn t-1  — the endpoint is down",
    );
    expect(text).toMatch(/work\.triaging#triager\s+1\s+100\s+80\s+5\s+assign✗, close/);
    expect(text).toContain("confirm_gate (state human.asking) accepts now: confirm");
    expect(text).toContain("question: Is this report real?");
    expect(text).toContain("confirm { note: string }");
  });

  it("follow's summary of a run failed through a routed fault ends with its outcome, the fault before it", () => {
    const lines = settledSummary("run-1", detail).trimEnd().split("\n");
    expect(lines[0]).toMatch(/^run run-1 done; tokens: prompt 100, cached 80 \(80%\)/);
    expect(lines[1]).toBe(
      "          fault     work.triaging#triager agent.fault { reason: infra, cause: unavailable } routed: the endpoint is down",
    );
    expect(lines.at(-1)).toBe("run run-1 outcome failed (final state work.escalated, human.answered)");
    expect(lines).toHaveLength(3);
  });

  it("a jr2 runs line says the outcome and final state, or the Gate a running run waits at", () => {
    expect(
      formatSummary({
        runId: "r1",
        workflow: "triage",
        status: "done",
        updatedAt: at,
        outcome: "failed",
        finalState: "escalated",
      }),
    ).toMatch(/^r1 {2}triage {7}done {6}failed {4}escalated\s+2026/);
    expect(
      formatSummary({
        runId: "r2",
        workflow: "review",
        status: "running",
        updatedAt: at,
        gates: ["merge_gate"],
      }),
    ).toContain("at Gate merge_gate");
  });
});
