import { describe, expect, it } from "vitest";
import { z } from "zod";
import { PickRequest } from "../src/index.js";

const commit = { "main/app": "a".repeat(40) };

describe("the optional commit on a pick (issue 28 'Wire and skew')", () => {
  it("a new Orchestrator reads the commit a new Harness sends", () => {
    expect(PickRequest.parse({ name: "submit", toolCallId: "c1", commit }).commit).toEqual(commit);
  });

  it("an older Orchestrator (PickRequest without the field) ignores it and takes the pick", () => {
    const older = z.object({ name: z.string(), arguments: z.unknown().optional(), toolCallId: z.string() });
    expect(older.parse({ name: "submit", toolCallId: "c1", commit })).toEqual({
      name: "submit",
      toolCallId: "c1",
    });
  });

  it("a new Orchestrator takes a pick from an older Harness (no commit) and refuses a malformed one", () => {
    expect(PickRequest.parse({ name: "submit", toolCallId: "c1" }).commit).toBeUndefined();
    expect(
      PickRequest.safeParse({ name: "submit", toolCallId: "c1", commit: { "main/app": "HEAD" } }).success,
    ).toBe(false);
  });
});
