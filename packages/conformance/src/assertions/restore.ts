import { describe, readConversation } from "../conversation.js";
import { readRequestBody } from "../request-body.js";
import { fail, pass, type Verdict } from "../verdict.js";

/** The crash points of §11's `JR2_CRASH_AT`. */
export type CrashPhase = "admit-sent" | "ledgered" | "pick-delivered" | "gate-open" | "timer-armed";

/**
 * §10 item 9: after the Orchestrator was killed mid-Turn and restored, no Turn's prompt reached
 * the model twice — a task message repeating the previous task message's prompt with no
 * Turn-ending receipt between them is the same Turn admitted again. Only a crash at
 * `admit-sent` (the admit reached the Harness, the ledger write did not) may send it twice,
 * and then at most twice (§5.4's documented window — never wider).
 * @param requests raw bodies of the conversation, oldest first (the newest holds the history)
 * @param crashAt where the Orchestrator was killed
 * @see SPEC §10.9, §5.4, §8
 */
export function noPromptAdmittedTwice(requests: readonly string[], crashAt: CrashPhase | "random"): Verdict {
  const raw = requests.at(-1);
  if (raw === undefined) return fail("no requests were recorded");
  const read = readRequestBody(raw);
  if (!read.ok) return fail(`the newest request cannot be read: ${read.reason}`);
  const allowedCopies = crashAt === "admit-sent" ? 2 : 1;
  let previous: { prompt: string; index: number; copies: number } | undefined;
  let endedSince = false;
  for (const m of readConversation(read.body)) {
    if (m.kind === "tool-result" && m.endsTurn) endedSince = true;
    if (m.kind !== "task") continue;
    if (previous && !endedSince && previous.prompt === m.prompt) {
      previous.copies++;
      if (previous.copies > allowedCopies) {
        return fail(
          `the prompt ${JSON.stringify(m.prompt.slice(0, 80))} reached the model ${previous.copies} times for one Turn (${describe(m)} repeats message ${previous.index}) after a crash at ${crashAt}; ${crashAt === "admit-sent" ? "the admit-sent window allows two" : "only a crash at admit-sent may re-send it"}`,
        );
      }
    } else {
      previous = { prompt: m.prompt, index: m.index, copies: 1 };
    }
    endedSince = false;
  }
  return pass;
}
