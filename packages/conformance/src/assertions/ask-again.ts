import { describe, type ReadMessage, readConversation } from "../conversation.js";
import { readRequestBody } from "../request-body.js";
import { NUDGE_TEXT } from "../texts.js";
import { fail, pass, type Verdict } from "../verdict.js";

/** A nudge as the model read it, with the list it had read before the nudge came. */
export interface SeenNudge {
  index: number;
  allowed: string[] | undefined;
  /** The last Allowed-picks list the model read before the nudge; `[]` makes the nudge a wake. */
  readBefore: string[] | undefined;
}

function newestMessages(requests: readonly string[]): ReadMessage[] | string {
  const raw = requests.at(-1);
  if (raw === undefined) return "no requests were recorded";
  const read = readRequestBody(raw);
  return read.ok ? readConversation(read.body) : `the newest request cannot be read: ${read.reason}`;
}

/** Every nudge (and wake) in a conversation's newest request, oldest first. */
export function nudgesOf(requests: readonly string[]): SeenNudge[] {
  const messages = newestMessages(requests);
  if (typeof messages === "string") return [];
  const out: SeenNudge[] = [];
  let lastRead: string[] | undefined;
  for (const m of messages) {
    if (m.kind === "nudge") out.push({ index: m.index, allowed: m.allowed, readBefore: lastRead });
    if ("allowed" in m && m.allowed !== undefined) lastRead = m.allowed;
  }
  return out;
}

/**
 * §10 item 6, what the model read: every nudge opens with exactly the nudge sentence, follows
 * a model answer that stopped (no tool calls), states a non-empty Allowed-picks list (the model
 * is never asked again with an empty list), and no Turn holds more nudges than the budget; no
 * restatement follows a model that stopped.
 * @param requests raw bodies of one conversation, oldest first (the newest holds the history)
 * @param options.budget nudges + wakes per Turn (SPEC default 2)
 * @see SPEC §10.6, §5.7
 */
export function askAgainRule(requests: readonly string[], options: { budget?: number } = {}): Verdict {
  const budget = options.budget ?? 2;
  const messages = newestMessages(requests);
  if (typeof messages === "string") return fail(messages);
  let asked = 0;
  for (const m of messages) {
    if (m.kind === "task") asked = 0;
    if (m.kind === "restatement" || m.kind === "nudge") {
      const before = messages[m.index - 1];
      const stopped = before?.kind === "assistant" && before.calls.length === 0;
      if (m.kind === "restatement" && stopped) {
        return fail(
          `message ${m.index} restates the Allowed picks to a model that stopped (${describe(before)})`,
        );
      }
      if (m.kind === "restatement") continue;
      if (!m.text.startsWith(`${NUDGE_TEXT}\n`)) {
        return fail(`message ${m.index} (nudge) does not open with exactly ${JSON.stringify(NUDGE_TEXT)}`);
      }
      if (!stopped) {
        return fail(
          `message ${m.index} (nudge) follows ${before ? describe(before) : "nothing"}: a nudge asks a model that stopped`,
        );
      }
      if (m.allowed === undefined || m.allowed.length === 0) {
        return fail(
          `message ${m.index} (nudge) states ${m.allowed === undefined ? "no Allowed picks" : '"Allowed now: none."'}: the model is never asked again with an empty list`,
        );
      }
      asked++;
      if (asked > budget)
        return fail(`message ${m.index} is nudge ${asked} of one Turn; the budget is ${budget}`);
    }
  }
  return pass;
}

/**
 * §10 item 6 "wake when a Gate opens a pick": the model stopped while its Allowed picks were
 * empty, and was later nudged (once the picks opened) with a non-empty list.
 * @see SPEC §10.6, §5.7 (wake)
 */
export function wokeWhenPickOpened(requests: readonly string[]): Verdict {
  const nudges = nudgesOf(requests);
  const wake = nudges.find((n) => n.readBefore !== undefined && n.readBefore.length === 0);
  if (!wake) {
    return fail(
      nudges.length
        ? `no nudge followed an empty Allowed-picks list (nudges at ${nudges.map((n) => n.index).join(", ")} followed non-empty lists)`
        : "the model was never nudged",
    );
  }
  if (!wake.allowed?.length) return fail(`the wake at message ${wake.index} states no Allowed picks`);
  return pass;
}

/**
 * §10 item 6 "budget exhaustion → agent.fault": the run feed carries a `fault` event with
 * `reason` (default `no-signal`), and the conversation holds exactly `budget` nudges in its last
 * Turn — the model was asked as often as allowed, and not once more.
 * @param feed parsed run-feed events (`GET /runs/:id/events` data objects)
 * @see SPEC §10.6, §5.6, §5.7
 */
export function faultedAfterBudget(
  requests: readonly string[],
  feed: readonly unknown[],
  options: { budget?: number; reason?: string } = {},
): Verdict {
  const budget = options.budget ?? 2;
  const reason = options.reason ?? "no-signal";
  const faults = feed.filter(
    (e): e is { type: "fault"; reason: string } =>
      typeof e === "object" && e !== null && (e as { type?: unknown }).type === "fault",
  );
  if (!faults.some((f) => f.reason === reason)) {
    return fail(
      `the run feed carries no fault with reason "${reason}" (faults: ${faults.map((f) => f.reason).join(", ") || "none"})`,
    );
  }
  const rule = askAgainRule(requests, { budget });
  if (!rule.ok) return rule;
  const messages = newestMessages(requests);
  if (typeof messages === "string") return fail(messages);
  const lastTask = messages.findLast((m) => m.kind === "task");
  const asked = messages.filter((m) => m.kind === "nudge" && m.index > (lastTask?.index ?? -1)).length;
  if (asked !== budget)
    return fail(`the last Turn was nudged ${asked} time(s) before its fault; the budget is ${budget}`);
  return pass;
}
