import { describe, expect, it } from "vitest";
import { classifyReceipt, RECEIPT_CLASSES, receiptClassesPresent, receiptsOf } from "../../src/index.js";
import {
  body,
  busy,
  calls,
  changeArguments,
  coderRequests,
  invalidArguments,
  movedInState,
  noSuchTool,
  notAllowed,
  result,
  system,
  task,
  turnOver,
} from "../fixtures/conversation.js";

const reason = (v: { ok: boolean; reason?: string }) => (v.ok ? "" : (v as { reason: string }).reason);

/** One Turn that meets every receipt class a live Turn can show. */
function everyClass(): string[] {
  const a = "dispute, finish.";
  return [
    body([
      system(),
      task("Address the review comments.", a),
      calls(["1", "approve", { summary: "s" }]),
      result("1", notAllowed("approve", a)),
      calls(["2", "run_tests", {}]),
      result("2", noSuchTool("run_tests", a)),
      calls(["3", "dispute", { reason: "short" }]),
      result("3", changeArguments("dispute", a)),
      calls(["4", "finish", { summary: "" }]),
      result("4", invalidArguments("finish", a)),
      calls(["5", "dispute", { reason: "enter the arguing mode" }]),
      result("5", movedInState("dispute", a)),
      calls(["6", "finish", { summary: "s" }]),
      result("6", busy("finish")),
      calls(["7", "finish", { summary: "s" }]),
      result("7", turnOver("finish")),
    ]),
  ];
}

const EXPECTED = [
  { pick: "approve", class: "not-allowed" },
  { pick: "run_tests", class: "no-such-tool" },
  { pick: "dispute", class: "change-arguments" },
  { pick: "finish", class: "invalid-arguments" },
  { pick: "dispute", class: "moved-in-state" },
  { pick: "finish", class: "busy" },
  { pick: "finish", class: "turn-over" },
] as const;

describe("every receipt class of §7.4 (§10.5)", () => {
  it("accepts a Turn that shows each class, a pick of another state and an invented tool included", () => {
    expect(receiptClassesPresent(everyClass(), EXPECTED)).toEqual({ ok: true });
    expect(receiptsOf(everyClass()).map((r) => r.class)).toEqual(EXPECTED.map((e) => e.class));
  });

  it("accepts the coder conversation's receipts and ignores Working-tool results", () => {
    const v = receiptClassesPresent(coderRequests(), [
      { pick: "approve", class: "not-allowed" },
      { pick: "run_tests", class: "no-such-tool" },
      { pick: "finish", class: "turn-over" },
    ]);
    expect(v).toEqual({ ok: true });
    // The last Turn's turn-over receipt never reaches the model server: no request follows it.
    expect(receiptsOf(coderRequests()).some((r) => r.pick === "dispute")).toBe(false);
    expect(receiptsOf(coderRequests()).some((r) => r.pick === "ls")).toBe(false);
  });

  it("rejects a run that never showed an expected class", () => {
    const v = receiptClassesPresent(coderRequests(), [{ pick: "finish", class: "busy" }]);
    expect(reason(v)).toMatch(
      /missing receipt\(s\): busy for "finish"; the model was shown: finish→turn-over/,
    );
  });

  it("rejects an engine's default text for an invented tool", () => {
    const raw = body([
      system(),
      task("Go.", "finish."),
      calls(["1", "run_tests", {}]),
      result("1", "Tool run_tests not found"),
    ]);
    expect(reason(receiptClassesPresent([raw], []))).toMatch(
      /is none of §7.4's receipts: "Tool run_tests not found"/,
    );
  });

  it("rejects a paraphrased correction receipt: its text is fixed verbatim", () => {
    const text = "approve is not allowed right now. Pick another tool.\nAllowed now: finish.";
    const raw = body([system(), task("Go.", "finish."), calls(["1", "approve", {}]), result("1", text)]);
    expect(classifyReceipt("approve", text)).toBe("unknown");
    expect(receiptClassesPresent([raw], []).ok).toBe(false);
  });

  it("rejects a receipt that leaves the Turn open without the Allowed line", () => {
    const text = notAllowed("approve", "finish.").split("\n")[0] as string;
    const raw = body([system(), task("Go.", "finish."), calls(["1", "approve", {}]), result("1", text)]);
    expect(reason(receiptClassesPresent([raw], []))).toMatch(
      /not-allowed receipt of "approve" leaves the Turn open but does not end with the Allowed-picks line/,
    );
  });

  it("classifies the turn-over receipt only when it is exact", () => {
    expect(classifyReceipt("finish", turnOver("finish"))).toBe("turn-over");
    expect(classifyReceipt("finish", `${turnOver("finish")}\nAllowed now: none.`)).not.toBe("turn-over");
    expect(RECEIPT_CLASSES).toContain("no-such-tool");
  });
});
