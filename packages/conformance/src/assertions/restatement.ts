import { describe, type ReadMessage, readConversation } from "../conversation.js";
import { readRequestBody } from "../request-body.js";
import { sameSet } from "../texts.js";
import { fail, pass, type Verdict } from "../verdict.js";

/** Checks one request's messages; `undefined` when they keep the restatement rules. */
function restatementFault(messages: readonly ReadMessage[]): string | undefined {
  let lastRead: { list: string[]; at: ReadMessage } | undefined;
  let turnEndedAt: ReadMessage | undefined;
  for (const m of messages) {
    if (m.kind === "task" || m.kind === "nudge") turnEndedAt = undefined;
    if (m.kind === "restatement") {
      if (turnEndedAt) {
        return `message ${m.index} restates the Allowed picks after the Turn ended at ${describe(turnEndedAt)}: nothing may be read or said after the Turn ended`;
      }
      const placement = placementFault(messages, m);
      if (placement) return placement;
      if (m.allowed === undefined)
        return `message ${m.index} is a restatement without an "Allowed now:" line`;
      if (lastRead && sameSet(lastRead.list, m.allowed)) {
        return `message ${m.index} restates "Allowed now: ${m.allowed.join(", ") || "none"}", which the model already read at ${describe(lastRead.at)}: a restatement is sent only when the Allowed picks changed`;
      }
    }
    if (m.kind === "tool-result" && m.endsTurn && !turnEndedAt) turnEndedAt = m;
    if ("allowed" in m && m.allowed !== undefined) lastRead = { list: m.allowed, at: m };
  }
  return undefined;
}

/**
 * A restatement must sit right after the model answer's last tool result: the message before
 * it is a tool result, and the run of tool results back to the answer answers every call of it.
 */
function placementFault(messages: readonly ReadMessage[], r: ReadMessage): string | undefined {
  const before = messages[r.index - 1];
  if (before?.kind !== "tool-result") {
    return `message ${r.index} (restatement) follows ${before ? describe(before) : "nothing"}, not the last tool result of a model answer`;
  }
  const answered = new Set<string>();
  let j = r.index - 1;
  while (j >= 0 && messages[j]?.kind === "tool-result") {
    answered.add((messages[j] as { toolCallId: string }).toolCallId);
    j--;
  }
  const answer = messages[j];
  if (answer?.kind !== "assistant" || answer.calls.length === 0) {
    return `message ${r.index} (restatement) follows tool results that answer no model answer`;
  }
  const open = answer.calls.filter((c) => !answered.has(c.id));
  if (open.length) {
    return `message ${r.index} (restatement) sits before the tool result of ${open.map((c) => `"${c.name}" (${c.id})`).join(", ")} from ${describe(answer)}: it must follow the answer's last tool result`;
  }
  return undefined;
}

/**
 * §10 item 3: every restatement (`<jr2-turn>The workflow's state changed …`) sits right after
 * the model answer's last tool result, states a list that differs (as a set) from the last one
 * the model read, and none appears after the Turn ended (a pick's receipt said the turn is
 * over) until the next Submission's message.
 * @param requests raw bodies of one conversation, oldest first (each is checked)
 * @see SPEC §10.3, §7.5
 */
export function restatementsWellPlaced(requests: readonly string[]): Verdict {
  for (const [i, raw] of requests.entries()) {
    const read = readRequestBody(raw);
    if (!read.ok) return fail(`request ${i} cannot be read: ${read.reason}`);
    const fault = restatementFault(readConversation(read.body));
    if (fault) return fail(`request ${i}: ${fault}`);
  }
  return pass;
}

/**
 * §10 item 3 "none after the Turn ended", at the request level: no model request follows a
 * receipt that ended the Turn until a new Submission's message (task or nudge) opens one.
 * @param requests raw bodies of one conversation, oldest first
 * @see SPEC §10.3, §7.2 step 4
 */
export function noRequestAfterTurnEnded(requests: readonly string[]): Verdict {
  for (const [i, raw] of requests.entries()) {
    const read = readRequestBody(raw);
    if (!read.ok) return fail(`request ${i} cannot be read: ${read.reason}`);
    let endedAt: ReadMessage | undefined;
    for (const m of readConversation(read.body)) {
      if (m.kind === "task" || m.kind === "nudge") endedAt = undefined;
      else if (m.kind === "tool-result" && m.endsTurn && !endedAt) endedAt = m;
    }
    if (endedAt) return fail(`request ${i} was sent after the Turn ended at ${describe(endedAt)}`);
  }
  return pass;
}

/** How many restatements the newest request of a conversation holds. */
export function countRestatements(requests: readonly string[]): number {
  const raw = requests.at(-1);
  if (raw === undefined) return 0;
  const read = readRequestBody(raw);
  return read.ok ? readConversation(read.body).filter((m) => m.kind === "restatement").length : 0;
}
