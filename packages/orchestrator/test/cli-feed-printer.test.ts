/** The CLI's feed lines for retries, text calls and faults with a cause (issue 10 §3), and the event log's (ADR-0256). */
import type { RunFeedEvent } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { cachedText, formatFeedEvent } from "../src/cli/feed-printer.js";

const at = "2026-12-01T09:00:00.000Z";
const line = (event: Record<string, unknown>) =>
  formatFeedEvent({ seq: 1, at, child: "review#reviewer", ...event } as RunFeedEvent, "run-1");

describe("the CLI feed printer", () => {
  it("an unavailable endpoint reads as waiting for the model endpoint, with the model, the wait and what it said", () => {
    expect(
      line({
        type: "retry",
        attempt: 3,
        reason: "unavailable",
        waitMs: 2000,
        model: "qwen",
        message: "503 at http://gpu:8000/v1",
      }),
    ).toBe(
      "09:00:00  waiting   review#reviewer  for the model endpoint (model qwen): down or loading, trying again in 2.0 s (attempt 3) — 503 at http://gpu:8000/v1",
    );
  });

  it("a cut stream reads as the same request sent again", () => {
    expect(line({ type: "retry", attempt: 1, reason: "stream-cut", waitMs: 500, model: "qwen" })).toBe(
      "09:00:00  retry     review#reviewer  the model's answer was cut off (model qwen); the same request again in 0.5 s (attempt 1)",
    );
  });

  it("an Orchestrator retry (no wait) keeps its plain line", () => {
    expect(line({ type: "retry", attempt: 1, reason: "conversation lost; admitted on a new one" })).toBe(
      "09:00:00  retry     review#reviewer  attempt 1: conversation lost; admitted on a new one",
    );
  });

  it("a text call says what the model did and what to check, never the model's text", () => {
    expect(line({ type: "text-call", agent: "reviewer" })).toBe(
      "09:00:00  text-call review#reviewer  the model wrote a tool call as text instead of calling it; is the model server's tool-call parser on?",
    );
  });

  it("a fault names its cause beside its reason", () => {
    expect(
      line({ type: "fault", reason: "no-signal", cause: "text-call", detail: "the parser may be off" }),
    ).toBe(
      "09:00:00  fault     review#reviewer  agent.fault { reason: no-signal, cause: text-call }: the parser may be off",
    );
    expect(line({ type: "fault", reason: "deadline" })).toBe(
      "09:00:00  fault     review#reviewer  agent.fault { reason: deadline }",
    );
  });

  it("the event log's operator lines: pick arguments, a Gate waiting since, answered by whom, a timer firing", () => {
    expect(
      line({
        type: "pick",
        agent: "reviewer",
        name: "approve",
        arguments: { note: "ok" },
        answer: { moved: true, turnComplete: true },
      }),
    ).toBe('09:00:00  pick      review#reviewer  approve {"note":"ok"} → moved, turn complete');
    expect(line({ type: "gate-answered", gate: "merge_gate", event: "merge", by: "cli" })).toBe(
      "09:00:00  answered  merge_gate ← merge (by cli)",
    );
    expect(line({ type: "timer", after: "xstate.after.1h.triage.waiting", value: "closed" })).toBe(
      "09:00:00  timer     xstate.after.1h.triage.waiting fired → closed",
    );
    expect(
      line({
        type: "gate",
        since: "2026-12-01T08:59:00.000Z",
        gate: {
          id: "merge_gate",
          path: "merging",
          accepts: [{ name: "merge" }],
          acceptsNow: ["merge"],
          meta: null,
        },
      }).split("\n")[0],
    ).toBe("09:00:00  gate      merge_gate is open (waiting since 08:59:00); accepts now: merge");
  });
});

describe("the CLI feed printer's operator controls (ADR-0271)", () => {
  it("a resume says what drift was accepted, which Turns moved and who asked", () => {
    expect(
      line({
        type: "resumed",
        accepted: "Machine `(top)` 15b5 → 7c0e; no Menu changed",
        moved: [],
        by: "cli",
      }),
    ).toBe("09:00:00  resumed   drift accepted: Machine `(top)` 15b5 → 7c0e; no Menu changed (by cli)");
    expect(
      line({ type: "resumed", accepted: "Menus changed: coder", moved: ["implement#coder"], by: "http" }),
    ).toBe(
      "09:00:00  resumed   drift accepted: Menus changed: coder; on a new conversation: implement#coder (by http)",
    );
  });

  it("a retry names the Turn, the version it was set back to and its new turnId", () => {
    expect(line({ type: "retried", turnId: "t-2", fromVersion: 3, by: "console" })).toBe(
      "09:00:00  retried   review#reviewer from version 3, as Turn t-2 (by console)",
    );
  });
});

describe("cached tokens in words (issue 22 §5)", () => {
  it("says `?` alone for a run with no model request, never `0 (?)`", () => {
    expect(cachedText({ promptTokens: 0, cachedTokens: 0, completionTokens: 0, requests: 0 })).toBe("?");
    // An older Orchestrator sends no `requests`: no tokens at all reads the same.
    expect(cachedText({ promptTokens: 0, cachedTokens: 0, completionTokens: 0 })).toBe("?");
  });

  it("says the count and the share for a run with model requests", () => {
    expect(cachedText({ promptTokens: 200, cachedTokens: 150, completionTokens: 9, requests: 2 })).toBe(
      "150 (75%)",
    );
    expect(cachedText({ promptTokens: 200, cachedTokens: null, completionTokens: 9, requests: 2 })).toBe(
      "? (?)",
    );
  });
});
