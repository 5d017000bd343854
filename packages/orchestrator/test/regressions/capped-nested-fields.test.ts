/**
 * Issue 11 rules ("transcript entries over 64 KiB keep a cap and their full byte count") — a
 * Harness (buggy, hostile, or a newer one) controls every string of a `transcript` entry, not
 * only the top-level ones. Root cause: capEntry cut the entry's own text fields and its tool
 * calls' but left nested ones whole — a message's `notices` (a pick-answer's `pick`, its
 * Allowed picks, its issues) went to the store, the API and the console at any size.
 * Now every string of an entry, at any depth, is cut, and its path keeps its full byte count.
 * Found by the adversarial pass of issue 11.
 */
import type { TranscriptEntry } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { capEntry } from "../../src/durability/transcript-rows.js";

describe("a transcript entry with long nested strings", () => {
  it("is cut at every depth, each cut field counted by its path", () => {
    const long = "x".repeat(100);
    const entry: TranscriptEntry = {
      kind: "message",
      role: "user",
      part: "prompt",
      text: "short",
      json: "{}",
      notices: [
        {
          type: "pick-answer",
          pick: long,
          answer: { delivered: true, turnComplete: false, allowed: ["ok", long] },
        },
      ],
    };
    const { entry: cut, capped } = capEntry(entry, 20);
    expect(capped).toEqual({ "notices.0.pick": 100, "notices.0.answer.allowed.1": 100 });
    expect(cut).toEqual({
      ...entry,
      notices: [
        {
          type: "pick-answer",
          pick: "x".repeat(20),
          answer: { delivered: true, turnComplete: false, allowed: ["ok", "x".repeat(20)] },
        },
      ],
    });
  });
});
