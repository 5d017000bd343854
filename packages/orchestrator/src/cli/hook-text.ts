/**
 * The publish hook's result as the CLI says it (ADR-0226, ADR-0290): `jr2 show`'s branch view
 * and the `pushed` line of `jr2 follow`. A hook that failed (a non-zero exit, a timeout, a
 * signal) is said to have failed, with its exit and first line; the URL it printed is its
 * result only when it succeeded.
 */
import { escapeModelText, type HookResult } from "@jr2/wire";

/** Whether the publish hook succeeded: exit 0 within its time. Only then is its URL its result. */
export function hookSucceeded(h: HookResult): boolean {
  return h.exit === 0 && !h.timedOut;
}

/** A bare URL line: what a hook prints as its result (the Harness takes the last one, ADR-0226). */
const URL_LINE = /^\s*https?:\/\/\S+\s*$/;

/**
 * Why a failed hook failed, in one line: `exit 1`, `timed out (killed)` or `killed by SIGTERM`,
 * then the first line of its output that is not a bare URL — a failed hook's URL is no result
 * (`gh pr create` may print the pull request, then fail on a label), so it never stands for
 * the hook. The hook's text is escaped (issue 25 §7). Pure.
 */
export function hookFailure(h: HookResult): string {
  const how = h.timedOut
    ? "timed out (killed)"
    : h.exit === null
      ? `killed by ${h.signal ?? "a signal"}`
      : `exit ${h.exit}`;
  const first = h.tail.find((l) => !URL_LINE.test(l));
  return `${how}${first ? `: ${escapeModelText(first)}` : ""}`;
}
