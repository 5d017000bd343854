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

  it("refuses a NUL character in toolCallId or turnId, naming it (a store key cannot hold one)", () => {
    for (const pick of [
      { name: "finish", toolCallId: "call\u00001" },
      { name: "finish", toolCallId: "call-1", turnId: "t\u0000" },
    ]) {
      const parsed = PickRequest.safeParse(pick);
      expect(parsed.success).toBe(false);
      expect(JSON.stringify(parsed.error?.issues)).toContain("NUL character");
    }
  });

  it("refuses an empty turnId rather than reading it as no Turn", () => {
    expect(PickRequest.safeParse({ name: "finish", toolCallId: "call_0", turnId: "" }).success).toBe(false);
  });
});
