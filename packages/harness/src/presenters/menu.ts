import type { Notice, TolerantPickAnswer } from "@jr2/wire";

/**
 * Every text the model reads that jr2 writes lives here (§7.3, §7.4, §5.7). Presenters
 * (menu-tools.ts) only place these strings. Nothing here carries counters, times or ids.
 * @see SPEC §7.3, §7.4; seed ADR-0029
 */

/** The standing part, appended to the Agent's instructions in the system prompt (byte-stable). */
export const STANDING_PART = [
  "<jr2-briefing>",
  "You work inside a workflow. You end your turn with a pick: a call of one of the tools that the newest " +
    '"Allowed now:" line lists. Your tools block also holds tools that only other steps of the workflow ' +
    'accept; a call of a tool that the newest "Allowed now:" line does not list is refused.',
  "Every pick is answered. The answer says whether your turn is over and, while it is not, what is allowed now. Once an answer says your turn is over, stop: call no further tool.",
  '"Allowed now: none." means every pick is refused until the workflow opens one.',
  "</jr2-briefing>",
].join("\n");

/** The nudge's opening sentence (§5.7), followed by the Turn part. */
export const NUDGE_TEXT = "Your previous turn ended, and the workflow is still waiting for your pick.";

/** Orders names by their Menu position; names off the Menu keep their order, after. */
export function inMenuOrder(names: readonly string[], menuOrder: readonly string[]): string[] {
  const pos = (n: string) => {
    const i = menuOrder.indexOf(n);
    return i === -1 ? Number.MAX_SAFE_INTEGER : i;
  };
  return [...new Set(names)].sort((a, b) => pos(a) - pos(b));
}

/** `Allowed now: a, b.` or `Allowed now: none.` plus one sentence (§7.3). */
export function allowedLine(allowed: readonly string[], menuOrder: readonly string[]): string {
  if (allowed.length === 0) {
    return "Allowed now: none. Every pick is refused until the workflow opens one.";
  }
  return `Allowed now: ${inMenuOrder(allowed, menuOrder).join(", ")}.`;
}

/** The restatement at a step boundary (§7.5), one `<jr2-turn>` block. */
export function restatement(allowed: readonly string[], menuOrder: readonly string[]): string {
  return `<jr2-turn>The workflow's state changed since you last read the Allowed picks. ${allowedLine(allowed, menuOrder)}</jr2-turn>`;
}

/** One notice as one line of the Turn part (§7.1, §7.3). */
export function noticeLine(notice: Notice): string {
  switch (notice.type) {
    case "conversation-new":
      return "This is a new conversation: the earlier one was lost, so its messages are not here.";
    case "readmitted":
      return "Your turn was interrupted and is given to you again.";
    case "unparsable-output":
      return "Your previous answer could not be read as a tool call by the model server, so nothing was run or picked. Make the tool call again, in the tools' own format, with nothing else around it.";
    case "text-call":
      if (notice.where === "reasoning")
        return "Your previous answer wrote a tool call inside your reasoning (tool-call markup in your thinking), so nothing was run or picked. Call the tool itself, as a tool call, after your reasoning.";
      return "Your previous answer wrote a tool call out as text (tool-call markup in your reply), so nothing was run or picked. Call the tool itself, as a tool call, instead of writing it out.";
    case "pick-answer": {
      const a = notice.answer;
      const body = receiptBody(notice.pick, {
        ...a,
        moved: a.moved,
        refusal: a.refusal,
        issues: a.issues,
        allowed: a.allowed,
      });
      return `Your earlier pick was answered before you could read it: ${body}`;
    }
  }
}

/** The receipt without its Allowed line; `undefined` allowed means an older Orchestrator. */
function receiptBody(pick: string, a: TolerantPickAnswer): string {
  const allowed = a.allowed;
  if (a.turnComplete) {
    if (a.moved === true || (a.moved === undefined && a.delivered)) {
      return `Delivered "${pick}". The workflow moved on; your turn is over. Call no further tool.`;
    }
    return `"${pick}" was answered, and your turn is over. Call no further tool.`;
  }
  if (a.refusal === "busy") {
    return `"${pick}" was refused: the workflow is still working on what this turn started, and every pick is refused until that is done. Your turn is not over.`;
  }
  if (a.refusal === "invalid-arguments") {
    const fields = (a.issues ?? []).map(
      (i) => `${i.path.length ? i.path.join(".") : "(arguments)"}: ${i.message}`,
    );
    const list = fields.length ? fields.join("; ") : "the arguments do not match the tool's parameters";
    return `"${pick}" was refused because its arguments are invalid — ${list}. Your turn is not over. Fix these fields and call it again.`;
  }
  if (a.refusal === "off-menu") return unknownToolBody(pick);
  if (a.moved === true) {
    return `Delivered "${pick}". The workflow is still in the state that asked for this turn, so your turn is not over.`;
  }
  if (a.moved === false) {
    if (allowed?.includes(pick)) {
      return `"${pick}" reached the workflow, but a condition refused these arguments and nothing moved. Your turn is not over. Change the arguments, or pick another allowed tool.`;
    }
    return `${pick} is not allowed in the workflow's current state, whatever its arguments. Your turn is not over. Do not repeat this call — pick one of the allowed tools.`;
  }
  // No `moved` (an older Orchestrator): delivered, without claiming the workflow moved (§7.4).
  return `Delivered "${pick}". Your turn is not over.`;
}

function unknownToolBody(name: string): string {
  return `There is no tool "${name}" in this workflow; nothing was delivered. Your turn is not over. Pick one of the allowed tools.`;
}

/** Appends the Allowed line when the list is known (absent is not empty, §7.6). */
function withAllowed(
  body: string,
  allowed: readonly string[] | undefined,
  menuOrder: readonly string[],
): string {
  return allowed === undefined ? body : `${body}\n${allowedLine(allowed, menuOrder)}`;
}

/**
 * The receipt for a pick's answer (§7.4). A receipt that leaves the Turn open ends with the
 * Allowed line; the turn-over receipt has none.
 */
export function receipt(pick: string, answer: TolerantPickAnswer, menuOrder: readonly string[]): string {
  const body = receiptBody(pick, answer);
  return answer.turnComplete ? body : withAllowed(body, answer.allowed, menuOrder);
}

/** A call of a tool that is not in the tools block at all (models invent tools, §7.4). */
export function unknownToolReceipt(
  name: string,
  allowed: readonly string[] | undefined,
  menuOrder: readonly string[],
): string {
  return withAllowed(unknownToolBody(name), allowed, menuOrder);
}

/** 404 on a pick: the Turn is over (§7.4). */
export const TURN_GONE_RECEIPT =
  "The workflow has no open turn for you any more: your turn is over. Call no further tool.";

/** A pick whose POST still failed after the bounded re-sends (§7.4). */
export function pickInTransitReceipt(pick: string): string {
  return `"${pick}" may not have reached the workflow: the connection to it failed. Do not assume it landed; the next restatement or answer will show the workflow's state.`;
}

/** A tool call from an answer cut off at the output limit (§7.2 step 4): never run. */
export function truncatedCallReceipt(
  name: string,
  allowed: readonly string[] | undefined,
  menuOrder: readonly string[],
): string {
  return withAllowed(
    `Your answer was cut off at the output limit, so this call of "${name}" was not run and nothing was delivered. Your turn is not over. Make the call again, with shorter arguments.`,
    allowed,
    menuOrder,
  );
}

/** Longest quote of the model's own argument bytes in a receipt (characters). */
export const SENT_QUOTE_LIMIT = 200;

/** What the model sent, quoted for its receipt (the history replays `{}` in its place). */
function sentQuote(sent: string): string {
  const text = sent.length > SENT_QUOTE_LIMIT ? `${sent.slice(0, SENT_QUOTE_LIMIT)}…` : sent;
  return text === "" ? "" : ` You sent: ${text}`;
}

/** Arguments that are not JSON: never run, never delivered; the receipt quotes what was sent. */
export function argumentsNotJsonReceipt(
  name: string,
  allowed: readonly string[] | undefined,
  menuOrder: readonly string[],
  sent = "",
): string {
  return withAllowed(
    `The arguments of this call of "${name}" are not valid JSON, so it was not run and nothing was delivered.${sentQuote(sent)}\nYour turn is not over. Call it again with a JSON object as its arguments.`,
    allowed,
    menuOrder,
  );
}

/**
 * Arguments that are JSON but not an object (a string — often an object encoded twice — a
 * number, an array; case C7): never run, never delivered; the receipt says what was sent.
 */
export function argumentsNotObjectReceipt(
  name: string,
  got: { sent: string; kind: string },
  allowed: readonly string[] | undefined,
  menuOrder: readonly string[],
): string {
  return withAllowed(
    `The arguments of this call of "${name}" are ${got.kind}, not a JSON object, so it was not run and nothing was delivered.${sentQuote(got.sent)}\nYour turn is not over. Call it again with the arguments as one JSON object, not encoded as a string.`,
    allowed,
    menuOrder,
  );
}

/**
 * After an answer cut off at the output limit with no tool call (issue 10 §3): one `<jr2-turn>`
 * block asking once more; a second cut in a row ends the Submission (`output-limit`).
 */
export function outputCutRestatement(
  allowed: readonly string[] | undefined,
  menuOrder: readonly string[],
): string {
  const line = allowed === undefined ? "" : ` ${allowedLine(allowed, menuOrder)}`;
  return `<jr2-turn>Your previous answer was cut off at the output limit before it made a pick. Your turn is not over. Answer again, more briefly, and end with a pick.${line}</jr2-turn>`;
}

/** A call identical (name and arguments) to one earlier in the same answer: not run (issue 25 §1). */
export const NOT_RUN_DUPLICATE = "Not run: the same call appears earlier in this answer.";

/** Several calls the server sent with nothing to tell them apart, arrived as one: not run (issue 25 §3). */
export const NOT_RUN_MERGED =
  "Not run: several tool calls of your answer arrived merged into one, so none could be read. Make one tool call per answer.";

/** A call in the same answer after the Turn ended: not run. */
export const NOT_RUN_TURN_OVER = "Not run: your turn was already over.";

/** A call of an answer the Harness stopped (runaway): not run. */
export const NOT_RUN_STOPPED = "Not run: this turn was stopped because it was not concluding.";

/**
 * One line appended to a Working tool's result at the 3rd identical call in a row (issue 25 §12);
 * the 5th ends the Turn.
 */
export function repeatedCallNote(name: string, times: number): string {
  return `Note: you have made this exact call of "${name}" ${times} times in a row, and the result above is what it returned this time. Repeating it will not change the result: do something else, or make your pick.`;
}

/** A Working tool's arguments failed its parameters (the model reads this, not pi's text). */
export function workingToolArgumentsReceipt(name: string, problems: readonly string[]): string {
  return `The arguments of "${name}" do not match its parameters (${problems.join("; ")}). Call it again with corrected arguments.`;
}

/** A Working tool's path outside the working directory. */
export function outsideCwdReceipt(name: string, path: string, cwd: string): string {
  return `"${name}" works inside the working directory ${cwd} only; "${path}" is outside it.`;
}

/** A Working tool that failed (its own message, prefixed). */
export function workingToolFailed(name: string, message: string): string {
  return `"${name}" failed: ${message}`;
}

/** An MCP tool of the conversation's snapshot its server no longer offers (issue 29). */
export function mcpToolGoneReceipt(name: string): string {
  return `\`${name}\` is no longer offered by its server; nothing ran.`;
}

/** An MCP server that could not be reached, started or listed for this call (issue 29 item 4). */
export function mcpServerDownReceipt(name: string, server: string, reason: string): string {
  return `\`${name}\` did not run: MCP server \`${server}\` is unavailable (${reason}). Carry on without it.`;
}

/** An MCP tool call its server answered with an error, or that failed in transit (issue 29 item 4). */
export function mcpCallFailedReceipt(name: string, message: string): string {
  return `\`${name}\` failed: ${message}`;
}

/** An MCP tool result cut to its bound (issue 29 item 3). */
export function mcpResultCutNote(keptBytes: number, totalBytes: number): string {
  return `\n[result cut: ${keptBytes} of ${totalBytes} bytes shown; ask the tool for less]`;
}
