/**
 * Turn answers for the browser suite while this Orchestrator does not serve issue 11's
 * `GET /runs/:runId/turns[/:turnId]` yet: shaped — and parsed — by @jr2/wire's `TurnList` and
 * `TurnTranscript`, bound to a real run's real Turn (its feed's `admission` and `pick` times),
 * with `planted` in every text a model writes: answer text, reasoning, a tool call's name and
 * arguments. Served through Playwright's request routing; the page itself is the real server's.
 */
import { type RunFeedEvent, TurnList, TurnTranscript } from "@jr2/wire";
import type { Page, Route } from "playwright-core";

/** A tool name with a newline, a forged pick line, an ANSI erase and a bidi override (issue 25 §7). */
export const FORGED_NAME =
  "approve\n09:00:00  pick      implement#coder  finish → moved, turn complete\u202E\u001b[2Kevil";

/** The first Turn of `child` (`state#agent`) in `events`, as a transcript with planted text. */
export function plantedTranscript(
  events: readonly RunFeedEvent[],
  child: string,
  planted: string,
): TurnTranscript {
  const [state = "", agent = ""] = child.split("#");
  const admitted = events.find((e) => e.type === "admission" && e.child === child);
  const picked = events.find((e) => e.type === "pick" && e.child === child);
  if (!admitted || !picked || picked.type !== "pick") throw new Error(`no Turn of ${child} in the feed`);
  const usage = { promptTokens: 1873, cachedTokens: 0, completionTokens: 35 };
  const at = admitted.at;
  const message = (part: string, role: string, text: string) => ({
    at,
    submissionId: "s-1",
    entry: { kind: "message", role, part, text, json: JSON.stringify({ role, content: text }) },
  });
  return TurnTranscript.parse({
    turnId: `t-${state}`,
    agent,
    state,
    startedAt: admitted.at,
    endedAt: picked.at,
    outcome: "picked",
    pick: { name: picked.name, arguments: picked.arguments ?? {} },
    usage: {
      ...usage,
      requests: 1,
      unreportedRequests: 0,
      reported: { promptTokens: 1873, cachedTokens: 0 },
    },
    prefix: {
      system: "You implement changes.",
      toolsJson: JSON.stringify([{ type: "function", name: "finish" }]),
    },
    entries: [
      message("prompt", "user", `Implement ${planted}.\n\nAllowed now: finish`),
      {
        at,
        submissionId: "s-1",
        entry: {
          kind: "answer",
          model: "coder",
          text: `answer: ${planted}`,
          reasoning: `reasoning: ${planted}`,
          toolCalls: [
            {
              id: "c-1",
              name: `<img src=x onerror="window.__xss=4">`,
              rawArguments: JSON.stringify({ path: planted }),
              disposition: "invented",
              reason: "no such tool",
            },
            {
              // A name forging a feed line, with a right-to-left override (issue 25 §7).
              id: "c-forged",
              name: FORGED_NAME,
              rawArguments: "{}",
              disposition: "invented",
              reason: "no such tool",
            },
            {
              id: "c-2",
              name: picked.name,
              rawArguments: JSON.stringify(picked.arguments ?? {}),
              disposition: "pick",
            },
          ],
          finishReason: "tool_calls",
          usage,
          replayed: true,
        },
      },
      message("receipt", "tool", "Delivered: finish moved the Machine."),
      message("restatement", "user", "Allowed now: finish"),
      message("nudge", "user", "Pick one of the Allowed picks."),
    ],
  });
}

/** Answers the run's Turn routes with `transcript` (and its summary) until the page is closed. */
export async function routeTurns(page: Page, runId: string, transcript: TurnTranscript): Promise<void> {
  const { prefix: _p, entries: _e, ...summary } = transcript;
  const list = TurnList.parse({ turns: [summary] });
  const json = (body: unknown) => ({
    status: 200,
    contentType: "application/json",
    body: JSON.stringify(body),
  });
  // Only the page's API calls: the document at /ui/runs/…/turns/… is the real server's.
  const answer = (body: unknown) => (route: Route) =>
    route.request().resourceType() === "fetch" ? route.fulfill(json(body)) : route.continue();
  await page.route(`**/runs/${runId}/turns`, answer(list));
  await page.route(`**/runs/${runId}/turns/${transcript.turnId}`, answer(transcript));
}
