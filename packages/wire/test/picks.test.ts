import { describe, expect, it } from "vitest";
import { PickRequest } from "../src/index.js";

describe("PickRequest (§4.3, ADR-0252)", () => {
  it("accepts a pick without turnId, as an older Harness sends it", () => {
    const parsed = PickRequest.safeParse({ name: "finish", arguments: {}, toolCallId: "call_0" });
    expect(parsed.success).toBe(true);
    expect(parsed.data?.turnId).toBeUndefined();
  });

  it("keeps the turnId of the Submission the pick belongs to", () => {
    const parsed = PickRequest.parse({ name: "finish", toolCallId: "call_0", turnId: "t-2" });
    expect(parsed.turnId).toBe("t-2");
  });

  it("refuses an empty turnId rather than reading it as no Turn", () => {
    expect(PickRequest.safeParse({ name: "finish", toolCallId: "call_0", turnId: "" }).success).toBe(false);
  });
});
