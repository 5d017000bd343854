/**
 * Skew both ways for issue 22's wire additions (SPEC §7.6): every new field is optional, so an
 * older reader (the shape before, rebuilt here) reads what a newer Orchestrator sends — the new
 * field is dropped, nothing fails — and a newer reader reads what an older one sent.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CancelRequest, RunFeedEvent, RunStatus, RunVersionSummary } from "../src/index.js";

const statusBefore = z.object({
  seq: z.number(),
  at: z.string(),
  type: z.literal("status"),
  status: RunStatus,
  value: z.unknown(),
  reason: z.string().optional(),
  outcome: z.string().optional(),
});
const cancelled = {
  seq: 7,
  at: "2026-12-01T00:00:00.000Z",
  type: "status",
  status: "cancelled",
  value: "coding",
  outcome: "cancelled",
  reason: "cancelled while drifted (…)",
};

describe("issue 22's wire fields, old and new readers", () => {
  it("a status event with `by` reads in an older reader (dropped) and without it in a newer one", () => {
    expect(statusBefore.parse({ ...cancelled, by: "console" })).toEqual(cancelled);
    expect(RunFeedEvent.parse(cancelled)).toEqual(cancelled);
    expect(RunFeedEvent.parse({ ...cancelled, by: "cli" })).toMatchObject({ by: "cli" });
    expect(RunFeedEvent.safeParse({ ...cancelled, by: "robot" }).success).toBe(false);
  });

  it("a version summary with `workspace` reads in an older reader, and one without in a newer", () => {
    const before = RunVersionSummary.omit({ workspace: true });
    const v = {
      version: 3,
      at: "2026-12-01T00:00:00.000Z",
      value: "x",
      status: "running",
      cause: { kind: "step" },
    };
    expect(before.parse({ ...v, workspace: { app: "c0ffee" } })).toEqual(v);
    expect(RunVersionSummary.parse(v)).toEqual(v);
    expect(RunVersionSummary.parse({ ...v, workspace: { app: "c0ffee" } }).workspace).toEqual({
      app: "c0ffee",
    });
  });

  it("a cancel's body is optional: none, {}, or the status the caller saw", () => {
    expect(CancelRequest.parse({})).toEqual({});
    expect(CancelRequest.parse({ expect: "drifted" })).toEqual({ expect: "drifted" });
    expect(CancelRequest.safeParse({ expect: "gone" }).success).toBe(false);
    expect(CancelRequest.nullish().parse(undefined)).toBeUndefined();
  });
});
