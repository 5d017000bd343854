/**
 * The publish hook's result as the CLI says it (ADR-0226, ADR-0290): `jr2 show`'s branch view
 * and the `pushed` line of `jr2 follow`, from @jr2/wire's `hookView` (the console's words too).
 */
import { escapeModelText, type HookResult, hookView } from "@jr2/wire";

/** Whether the publish hook succeeded: exit 0 within its time. Only then is its URL its result. */
export function hookSucceeded(h: HookResult): boolean {
  return hookView(h).ok;
}

/**
 * Why a failed hook failed, in one line: `exit 1`, `timed out (killed)` or `killed by SIGTERM`,
 * then the first line of its output that is not a bare URL, escaped (issue 25 §7). Pure.
 */
export function hookFailure(h: HookResult): string {
  const { status, firstLine } = hookView(h);
  return `${status}${firstLine ? `: ${escapeModelText(firstLine)}` : ""}`;
}
