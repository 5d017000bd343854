/**
 * Issue 27 rule "Skew": `history` on an admission, the `history` stream event and the
 * `harness-restarted` settlement are optional on the wire, both ways — a new Harness takes an
 * older Orchestrator's admission (no `history`); an older Harness's admission schema (recorded
 * below as it was) drops a newer Orchestrator's `history`; an older Orchestrator's stream reader
 * skips the `history` event (`readStreamEvent` of a union without it), and a `harness-restarted`
 * settlement is a plain `failed` to it.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AgentDefinition,
  HARNESS_RESTARTED,
  HistoryStreamEvent,
  Notice,
  readStreamEvent,
  SettlementError,
  StreamEvent,
  SubmissionRequest,
} from "../src/index.js";

const sha = "0".repeat(64);
const history = {
  submissions: [{ submissionId: "s1", messages: '[{"role":"user","content":"x"}]', sha256: sha }],
};
const admission = {
  agent: "coder",
  kind: "task",
  definition: { model: "m", instructions: "i", workspace: "write" },
  prompt: "Fix it.",
  kept: true,
};

/** The admission schema of a Harness before issue 27 (its fields as released). */
const OlderSubmissionRequest = z.object({
  agent: z.string().min(1),
  kind: z.enum(["task", "nudge"]),
  definition: AgentDefinition,
  prompt: z.string().optional(),
  cwd: z.string().optional(),
  kept: z.boolean().optional(),
  turnId: z.string().optional(),
  notices: z.array(Notice).optional(),
});

describe("the durable-history fields across versions (issue 27 skew rule)", () => {
  it("a new Harness takes an admission without history, and one with it", () => {
    expect(SubmissionRequest.parse(admission)).toEqual(admission);
    expect(SubmissionRequest.parse({ ...admission, history }).history).toEqual(history);
    expect(
      SubmissionRequest.safeParse({ ...admission, history: { submissions: [{ sha256: "x" }] } }).success,
    ).toBe(false);
  });

  it("an older Harness drops the pushed history and admits as before", () => {
    const parsed = OlderSubmissionRequest.parse({ ...admission, history });
    expect(parsed).toEqual(admission);
    expect("history" in parsed).toBe(false);
  });

  it("an older Orchestrator skips the history stream event; a new one reads it", () => {
    const event = { type: "history", submissionId: "s1", messages: "[]", sha256: sha };
    expect(readStreamEvent(event)).toEqual(event);
    expect(HistoryStreamEvent.parse(event)).toEqual(event);
    const olderUnion = z.discriminatedUnion(
      "type",
      StreamEvent.options.filter((o) => o.shape.type.value !== "history") as never,
    );
    expect(olderUnion.safeParse(event).success).toBe(false); // skipped, keeping its place
  });

  it("a harness-restarted settlement is an ordinary failed settlement to any reader", () => {
    const settled = {
      type: "submission-settled",
      submissionId: "s1",
      outcome: "failed",
      error: { type: HARNESS_RESTARTED, message: "the Harness restarted" },
    };
    expect(readStreamEvent(settled)).toEqual(settled);
    expect(SettlementError.parse(settled.error).type).toBe("harness-restarted");
  });
});
