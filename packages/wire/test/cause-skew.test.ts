/**
 * Issue 25 rule: the new fault cause `unparsable-output` (and the settlement's `textCallWhere`,
 * the `text-call` notice's `where`, the transcript's `serverId`) are additive — an older reader
 * that does not know them reads the fault with `cause` absent and the rest unchanged; a newer
 * reader takes an older peer's messages as they are.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FaultCause, readFaultCause, StreamEvent } from "../src/index.js";

/** The cause union before issue 25: what an older Orchestrator knows. */
const OlderCause = z.enum([
  "context-overflow",
  "bad-request",
  "unknown-model",
  "unavailable",
  "stream-cut",
  "output-limit",
  "text-call",
]);
const olderRead = (raw: unknown) => {
  const p = OlderCause.safeParse(raw);
  return p.success ? p.data : undefined;
};

const newer = {
  type: "submission-settled",
  submissionId: "s1",
  outcome: "failed",
  error: { type: "provider", cause: "unparsable-output", message: "m" },
} as const;

describe("issue 25's causes across versions", () => {
  it("a newer Harness's unparsable-output reads as cause absent in an older reader, known in a newer one", () => {
    for (const cause of ["unparsable-output", "tool-loop", "refusal-loop"]) {
      expect(olderRead(cause)).toBeUndefined();
      expect(readFaultCause(cause)).toBe(cause);
    }
    expect(readFaultCause(newer.error.cause)).toBe("unparsable-output");
    expect(StreamEvent.parse(newer)).toMatchObject({ error: { cause: "unparsable-output" } });
  });

  it("an older Harness's settlements read the same in a newer reader", () => {
    for (const cause of OlderCause.options) expect(readFaultCause(cause)).toBe(cause);
    const older = { type: "submission-settled", submissionId: "s1", outcome: "completed", textCall: true };
    expect(StreamEvent.parse(older)).toEqual(older);
    expect(FaultCause.options).toEqual(expect.arrayContaining([...OlderCause.options]));
  });

  it("textCallWhere is optional and dropped by a reader that does not know it", () => {
    const withWhere = {
      ...newer,
      outcome: "completed",
      error: undefined,
      textCall: true,
      textCallWhere: "reasoning",
    };
    const { error: _e, ...settled } = withWhere;
    expect(StreamEvent.parse(settled)).toMatchObject({ textCall: true, textCallWhere: "reasoning" });
  });

  it("misreported is optional: an older usage event reads as before; a newer one names the field", () => {
    const older = {
      type: "usage",
      submissionId: "s",
      promptTokens: 100,
      cachedTokens: 80,
      completionTokens: 5,
    };
    expect(StreamEvent.parse(older)).toEqual(older);
    const newer = { ...older, cachedTokens: 0, unreported: ["cachedTokens"], misreported: ["cachedTokens"] };
    expect(StreamEvent.parse(newer)).toMatchObject({ misreported: ["cachedTokens"] });
  });
});
