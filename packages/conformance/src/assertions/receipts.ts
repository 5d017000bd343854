import { readConversation } from "../conversation.js";
import { leavesTurnOpen, type ReceiptClass } from "../receipt-class.js";
import { readRequestBody } from "../request-body.js";
import { endsWithAllowedLine } from "../texts.js";
import { fail, pass, type Verdict } from "../verdict.js";

/** One pick's receipt as the model read it. */
export interface SeenReceipt {
  pick: string;
  toolCallId: string;
  text: string;
  class: ReceiptClass;
  /** Index of the request it was first seen in. */
  request: number;
}

/**
 * Every receipt (tool result of a call that is not a Working tool: a Menu tool or an invented
 * one) in a conversation's requests, once each, oldest first.
 * @see SPEC §7.4
 */
export function receiptsOf(requests: readonly string[]): SeenReceipt[] {
  const seen = new Map<string, SeenReceipt>();
  for (const [i, raw] of requests.entries()) {
    const read = readRequestBody(raw);
    if (!read.ok) continue;
    for (const m of readConversation(read.body)) {
      if (m.kind !== "tool-result" || m.receipt === undefined || seen.has(m.toolCallId)) continue;
      seen.set(m.toolCallId, {
        pick: m.tool ?? "?",
        toolCallId: m.toolCallId,
        text: m.text,
        class: m.receipt,
        request: i,
      });
    }
  }
  return [...seen.values()];
}

/** What a run is expected to have shown the model: a receipt of `class` for a call of `pick`. */
export interface ExpectedReceipt {
  pick: string;
  class: ReceiptClass;
}

/**
 * §10 item 5: every expected receipt class was shown for its pick, every receipt is one of
 * §7.4's classes (no engine default text ever reaches the model), and every receipt that leaves
 * the Turn open ends with the Allowed-picks line.
 * @param requests raw bodies of one or more conversations
 * @param expected e.g. `[{ pick: "dispute", class: "not-allowed" }, { pick: "run_tests", class: "no-such-tool" }]`
 * @see SPEC §10.5, §7.4
 */
export function receiptClassesPresent(
  requests: readonly string[],
  expected: readonly ExpectedReceipt[],
): Verdict {
  const receipts = receiptsOf(requests);
  for (const r of receipts) {
    if (r.class === "unknown") {
      return fail(
        `the result of "${r.pick}" (${r.toolCallId}) is none of §7.4's receipts: ${JSON.stringify(r.text)}`,
      );
    }
    if (leavesTurnOpen(r.class) && !endsWithAllowedLine(r.text)) {
      return fail(
        `the ${r.class} receipt of "${r.pick}" leaves the Turn open but does not end with the Allowed-picks line: ${JSON.stringify(r.text)}`,
      );
    }
  }
  const missing = expected.filter((e) => !receipts.some((r) => r.pick === e.pick && r.class === e.class));
  if (missing.length) {
    const shown = receipts.map((r) => `${r.pick}→${r.class}`).join(", ") || "none";
    return fail(
      `missing receipt(s): ${missing.map((e) => `${e.class} for "${e.pick}"`).join(", ")}; the model was shown: ${shown}`,
    );
  }
  return pass;
}
