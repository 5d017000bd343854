/** The CLI's feed lines for retries, text calls and faults with a cause (issue 10 §3). */
import type { RunFeedEvent } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { formatFeedEvent } from "../src/cli/feed-printer.js";

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
});
