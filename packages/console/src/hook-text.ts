/**
 * The publish hook's result as the Branches panel says it (ADR-0226, ADR-0290), the rule
 * `jr2 show` follows: a hook that failed (a non-zero exit, a timeout, a signal) is shown failed
 * with its exit and the first line of its output that is not a bare URL; the URL it printed is
 * shown as its result only when it succeeded. Before, a failed hook's URL read "printed <url>"
 * as if it were the pull request.
 */
import type { HookResult } from "@jr2/wire";

/** The panel's words for one hook result. */
export interface HookView {
  /** Exit 0 within its time. */
  ok: boolean;
  /** `exit 0`, `exit 1`, `timed out (killed)`, `killed by SIGTERM`. */
  status: string;
  /** A failed hook's first output line that is not a bare URL (absent: it printed none). */
  firstLine?: string;
  /** The URL it printed, only when it succeeded. */
  url?: string;
}

const URL_LINE = /^\s*https?:\/\/\S+\s*$/;

/** {@link HookView} of a hook result. Pure. */
export function hookView(hook: HookResult): HookView {
  const ok = hook.exit === 0 && !hook.timedOut;
  const status = hook.timedOut
    ? "timed out (killed)"
    : hook.exit === null
      ? `killed by ${hook.signal ?? "a signal"}`
      : `exit ${hook.exit}`;
  if (ok) return { ok, status, ...(hook.url ? { url: hook.url } : {}) };
  const firstLine = hook.tail.find((l) => !URL_LINE.test(l));
  return { ok, status, ...(firstLine ? { firstLine } : {}) };
}
