import type { ResolvedRetryPolicy } from "./models.js";
import { classify, describeSite, type RequestSite, type Verdict } from "./provider-errors.js";
import { type FiredTimer, type StreamProgress, streamTimers } from "./stream-timers.js";

/**
 * The retry loop around one model answer (issue 10 §3): a mid-stream failure is retried with the
 * same request bytes up to `attempts`; an endpoint that is down or loading is waited for with
 * backoff until `maxWaitMs` is spent — of sleeping or of wall time since the endpoint was first
 * seen down, whichever is more, so slow refusals cannot stretch the bound (a server's `Retry-After` can lengthen a wait,
 * never shorten it below the backoff); every retry is reported before its wait; an
 * abort ends a wait at once. Nothing of a failed attempt reaches pi: the caller forwards only
 * the answer this returns. A wait holds no endpoint slot and spends no step budget.
 * @see SPEC §5.6; docs/adr/0401-provider-failures.md
 */

/** What one attempt saw: pi-ai's last event and the wire probe. */
export interface AttemptSeen<T> {
  kind: "ended";
  /** Whether pi-ai ended with `done` (an answer) rather than `error`. */
  done: boolean;
  piError: string | undefined;
  probe: import("./fetch-probe.js").FetchProbe;
  /** The attempt's payload (answer, raw arguments …), opaque here. */
  value: T;
}

/** An attempt that never started: the abort came while it waited for an endpoint slot. */
export interface AttemptSkipped {
  kind: "skipped";
}

/** One retry, as the stream's `retry` event and the warn log carry it. */
export interface RetryNotice {
  /** The failed attempt's number, from 1. */
  attempt: number;
  /** Backoff before the next attempt (ms). */
  waitMs: number;
  cause: "stream-cut" | "unavailable";
  message: string;
}

/** How the answer ended. */
export type RetryOutcome<T> =
  | { kind: "answer"; seen: AttemptSeen<T> }
  | { kind: "aborted"; seen?: AttemptSeen<T> }
  | {
      kind: "failed";
      /** `stream-incomplete` for a stream cut past the bound, else `provider`. */
      type: "stream-incomplete" | "provider";
      cause: string | undefined;
      message: string;
      seen?: AttemptSeen<T>;
    };

export interface RetryOptions<T> {
  policy: ResolvedRetryPolicy;
  site: RequestSite;
  /** The Turn's abort (pi's signal). */
  signal: AbortSignal | undefined;
  /**
   * Runs one attempt; never throws. It arms `startTimeout` once it holds its endpoint slot and
   * passes the returned signal to the request; its body watcher reports `progress` (the first
   * token, then bytes) so the stream timers know a live stream from a silent one.
   */
  attempt(
    startTimeout: () => AbortSignal,
    progress: (kind: StreamProgress) => void,
  ): Promise<AttemptSeen<T> | AttemptSkipped>;
  /** Whether a `done` attempt is a usable answer (it had a finish reason, …). */
  usable(seen: AttemptSeen<T>): boolean;
  onRetry(notice: RetryNotice): void;
  /** [0, 1); injectable for tests. */
  random?: () => number;
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /** Wall clock (ms); injectable for tests. */
  now?: () => number;
}

/** Runs attempts until an answer, a fatal failure, the bound, or an abort. Never throws. */
export async function requestWithRetry<T>(opts: RetryOptions<T>): Promise<RetryOutcome<T>> {
  const { policy, site, signal } = opts;
  const random = opts.random ?? Math.random;
  const sleep = opts.sleep ?? abortableSleep;
  const now = opts.now ?? Date.now;
  let cuts = 0;
  let waits = 0;
  let waited = 0;
  /** When the endpoint was first seen down: slow refusals (a proxy's 504 after 60 s) count too. */
  let downSince: number | undefined;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) return { kind: "aborted" };
    const timer = streamTimers(signal, {
      firstTokenMs: policy.firstTokenTimeoutMs,
      idleMs: policy.idleTimeoutMs,
    });
    let seen: AttemptSeen<T> | AttemptSkipped;
    try {
      seen = await opts.attempt(timer.start, timer.progress);
    } finally {
      timer.clear();
    }
    if (seen.kind === "skipped" || signal?.aborted)
      return seen.kind === "skipped" ? { kind: "aborted" } : { kind: "aborted", seen };
    if (seen.done && opts.usable(seen)) return { kind: "answer", seen };
    const fired = timer.fired();
    const verdict: Verdict = fired
      ? { kind: "retry", cause: "stream-cut", message: timerMessage(site, fired, policy) }
      : classify(seen.probe, seen.piError, site);
    if (verdict.kind === "fatal")
      return { kind: "failed", type: "provider", cause: verdict.cause, message: verdict.message, seen };
    let waitMs: number;
    if (verdict.kind === "retry") {
      cuts++;
      if (cuts >= policy.attempts)
        return {
          kind: "failed",
          type: "stream-incomplete",
          cause: "stream-cut",
          message: `${verdict.message}; gave up after ${cuts} attempt${cuts === 1 ? "" : "s"} (retry.attempts of model entry \`${site.entry}\`)`,
          seen,
        };
      waitMs = backoffMs(policy, cuts, random);
    } else {
      waits++;
      downSince ??= now();
      const left = policy.maxWaitMs - Math.max(waited, now() - downSince);
      if (left <= 0)
        return {
          kind: "failed",
          type: "provider",
          cause: "unavailable",
          message: `${verdict.message}; the endpoint stayed unavailable for ${seconds(Math.max(waited, now() - downSince))} (retry.maxWaitMs of model entry \`${site.entry}\`)`,
          seen,
        };
      // A server's Retry-After is a floor, never shorter than our backoff: `Retry-After: 0` (or a
      // negative or past date) would otherwise spend none of `maxWaitMs` and loop without bound.
      waitMs = Math.min(Math.max(verdict.retryAfterMs ?? 0, backoffMs(policy, waits, random)), left);
      waited += waitMs;
    }
    opts.onRetry({ attempt, waitMs, cause: verdict.cause, message: verdict.message });
    await sleep(waitMs, signal);
  }
}

/**
 * Backoff before retry `n` (from 1): `initialBackoffMs · 2^(n−1)` capped at `maxBackoffMs`,
 * with equal jitter (half fixed, half random), so concurrent seats do not retry in step.
 */
export function backoffMs(
  policy: ResolvedRetryPolicy,
  n: number,
  random: () => number = Math.random,
): number {
  const base = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** Math.min(n - 1, 30));
  return Math.round(base / 2 + (random() * base) / 2);
}

/** Resolves after `ms`, or at once when `signal` aborts (an abort ends a wait within 1 s). */
export function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** The retry's words for a fired timer: which one, its bound, the key that sets it. */
function timerMessage(site: RequestSite, fired: FiredTimer, policy: ResolvedRetryPolicy): string {
  return fired === "first-token"
    ? `${describeSite(site)}: no first token within ${seconds(policy.firstTokenTimeoutMs)} (first-token timer, retry.firstTokenTimeoutMs)`
    : `${describeSite(site)}: the stream went silent for ${seconds(policy.idleTimeoutMs)} after its first token (idle timer, retry.idleTimeoutMs)`;
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
