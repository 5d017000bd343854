/**
 * Issue 30: the KV scheduling fields on the wire are additive. A new Orchestrator reads an older
 * Harness's settlement (no `kvWaitMs`) and stream; an older Orchestrator skips the `queued`
 * stream event (readStreamEvent → undefined for an unknown type, as the older union has none)
 * and drops `kvWaitMs` (zod objects drop keys they do not know); the feed's `queued` line parses.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RunFeedEvent, readStreamEvent, StreamEvent } from "../src/index.js";

const settled = { type: "submission-settled", submissionId: "s-1", outcome: "completed" } as const;

describe("KV scheduling across versions (issue 30)", () => {
  it("reads an older Harness's settlement, and a new one's wait", () => {
    expect(StreamEvent.parse(settled)).toEqual(settled);
    expect(StreamEvent.parse({ ...settled, kvWaitMs: 12_500 })).toEqual({ ...settled, kvWaitMs: 12_500 });
    expect(StreamEvent.safeParse({ ...settled, kvWaitMs: -1 }).success).toBe(false);
  });

  it("reads a queued stream event with its position and reason", () => {
    const queued = { type: "queued", submissionId: "s-1", position: 3, reason: "KV budget full" };
    expect(readStreamEvent(queued)).toEqual(queued);
    expect(readStreamEvent({ ...queued, position: 0 })).toBeUndefined();
  });

  it("is read by an older Orchestrator: the queued event skipped, kvWaitMs dropped", () => {
    // The union as it was before issue 30, reduced to the settlement (an unknown type fails it).
    const olderUnion = z.discriminatedUnion("type", [
      z.object({ type: z.literal("submission-settled"), submissionId: z.string(), outcome: z.string() }),
    ]);
    expect(
      olderUnion.safeParse({ type: "queued", submissionId: "s", position: 1, reason: "r" }).success,
    ).toBe(false);
    expect(olderUnion.parse({ ...settled, kvWaitMs: 5 })).toEqual(settled);
  });

  it("parses the feed's queued lines: one waiting request, and a Turn's wait in all", () => {
    const base = { seq: 7, at: "2026-12-02T03:00:00.000Z", type: "queued", child: "reviewing#reviewer" };
    const waiting = { ...base, position: 2, reason: "KV budget full" };
    expect(RunFeedEvent.parse(waiting)).toEqual(waiting);
    expect(RunFeedEvent.parse({ ...base, waitedMs: 4_000 })).toEqual({ ...base, waitedMs: 4_000 });
  });
});
