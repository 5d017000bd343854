/**
 * The two timers of one model-request attempt (issue 25 §10), replacing one bound on the whole
 * request that cut streams still producing tokens and sent the same bytes again (which cannot
 * finish sooner):
 * - **first token** (`retry.firstTokenTimeoutMs`, default 600 s): from the send until the first
 *   delta of text, reasoning or a tool call. Generous, because a server sends nothing while the
 *   request waits for a slot or prefills a long prompt; a head (headers, the role chunk) alone
 *   does not stop it.
 * - **idle** (`retry.idleTimeoutMs`, default 120 s): after the first token, the longest silence
 *   between two reads of the body; any byte counts, SSE comments (`: keep-alive`) included.
 * A stream that keeps producing is never cut, so never retried; no total bound (the Turn's
 * deadline bounds it). The timer that fired is named in the retry's message.
 */

/** Which timer cut the attempt. */
export type FiredTimer = "first-token" | "idle";

/** What the body watcher reports: bytes arrived, or the first token's delta did. */
export type StreamProgress = "bytes" | "token";

/** One attempt's timers around the Turn's abort signal. */
export interface StreamTimers {
  /** Arms the first-token timer (once the attempt holds its endpoint slot); the attempt's signal. */
  start(): AbortSignal;
  /** The body watcher's report: the first `token` switches to the idle timer; later bytes re-arm it. */
  progress(kind: StreamProgress): void;
  /** The timer that aborted the attempt, if one did. */
  fired(): FiredTimer | undefined;
  clear(): void;
}

/** The timers of one attempt: `firstTokenMs` then `idleMs` (both ms). */
export function streamTimers(
  outer: AbortSignal | undefined,
  bounds: { firstTokenMs: number; idleMs: number },
): StreamTimers {
  const ctl = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let phase: "unarmed" | FiredTimer | "cleared" = "unarmed";
  let firedTimer: FiredTimer | undefined;
  const onOuter = () => ctl.abort(outer?.reason);
  if (outer?.aborted) ctl.abort(outer.reason);
  else outer?.addEventListener("abort", onOuter, { once: true });
  const arm = (which: FiredTimer) => {
    if (timer) clearTimeout(timer);
    phase = which;
    timer = setTimeout(
      () => {
        firedTimer = which;
        ctl.abort(new Error(`model request: the ${which} timer fired`));
      },
      which === "first-token" ? bounds.firstTokenMs : bounds.idleMs,
    );
  };
  return {
    start() {
      if (phase === "unarmed") arm("first-token");
      return ctl.signal;
    },
    progress(kind) {
      if (firedTimer || phase === "cleared" || phase === "unarmed") return;
      if (phase === "first-token" && kind !== "token") return;
      arm("idle");
    },
    fired: () => firedTimer,
    clear() {
      if (timer) clearTimeout(timer);
      phase = "cleared";
      outer?.removeEventListener("abort", onOuter);
    },
  };
}
