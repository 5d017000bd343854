import type { TolerantPickAnswer } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import {
  allowedLine,
  NUDGE_TEXT,
  receipt,
  restatement,
  STANDING_PART,
  unknownToolReceipt,
} from "../src/index.js";

const ORDER = ["dispute", "approve", "finish"];
const a = (x: Partial<TolerantPickAnswer>): TolerantPickAnswer => ({
  delivered: true,
  moved: undefined,
  turnComplete: false,
  allowed: undefined,
  refusal: undefined,
  issues: undefined,
  ...x,
});

describe("receipts (§7.4)", () => {
  it("moved and turnComplete: the Turn is over, no Allowed line", () => {
    expect(receipt("finish", a({ moved: true, turnComplete: true, allowed: [] }), ORDER)).toBe(
      'Delivered "finish". The workflow moved on; your turn is over. Call no further tool.',
    );
  });
  it("moved in-state: not over, with the Allowed line in Menu order", () => {
    expect(receipt("approve", a({ moved: true, allowed: ["finish", "dispute"] }), ORDER)).toBe(
      'Delivered "approve". The workflow is still in the state that asked for this turn, so your turn is not over.\nAllowed now: dispute, finish.',
    );
  });
  it("moved false outside allowed: the exact correction text", () => {
    expect(receipt("approve", a({ moved: false, delivered: false, allowed: ["finish"] }), ORDER)).toBe(
      "approve is not allowed in the workflow's current state, whatever its arguments. Your turn is not over. Do not repeat this call — pick one of the allowed tools.\nAllowed now: finish.",
    );
  });
  it("moved false inside allowed: change the arguments", () => {
    expect(receipt("approve", a({ moved: false, allowed: ["approve"] }), ORDER)).toMatch(
      /Change the arguments/,
    );
  });
  it("busy: every pick refused, Allowed now: none.", () => {
    const text = receipt("finish", a({ delivered: false, refusal: "busy", allowed: [] }), ORDER);
    expect(text).toMatch(/still working on what this turn started/);
    expect(text.endsWith("Allowed now: none. Every pick is refused until the workflow opens one.")).toBe(
      true,
    );
  });
  it("invalid-arguments names the failing fields", () => {
    const text = receipt(
      "approve",
      a({
        delivered: false,
        refusal: "invalid-arguments",
        allowed: ["approve"],
        issues: [{ path: ["summary"], message: "Required" }],
      }),
      ORDER,
    );
    expect(text).toMatch(/summary: Required/);
    expect(text).toMatch(/Allowed now: approve\.$/);
  });
  it("off-menu and invented tools say the tool does not exist", () => {
    expect(
      receipt("run_tests", a({ delivered: false, refusal: "off-menu", allowed: ["finish"] }), ORDER),
    ).toMatch(/^There is no tool "run_tests" in this workflow/);
    expect(unknownToolReceipt("run_tests", ["finish"], ORDER)).toMatch(/Allowed now: finish\.$/);
  });
  it("an older Orchestrator (no moved, no allowed): delivered, without claiming a move, no Allowed line", () => {
    expect(receipt("approve", a({}), ORDER)).toBe('Delivered "approve". Your turn is not over.');
  });
});

describe("Briefing texts (§7.3, §5.7)", () => {
  it("the Allowed line and the restatement", () => {
    expect(allowedLine(["finish", "dispute"], ORDER)).toBe("Allowed now: dispute, finish.");
    expect(restatement(["approve"], ORDER)).toBe(
      "<jr2-turn>The workflow's state changed since you last read the Allowed picks. Allowed now: approve.</jr2-turn>",
    );
    expect(NUDGE_TEXT).toBe("Your previous turn ended, and the workflow is still waiting for your pick.");
  });
  it("the standing part names no Menu item and carries no digits", () => {
    for (const name of ORDER) expect(STANDING_PART).not.toContain(name);
    expect(STANDING_PART.replace(/jr2-briefing/g, "")).not.toMatch(/\d/);
  });
});
