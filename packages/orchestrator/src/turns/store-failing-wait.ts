/**
 * A Harness whose store refuses writes (a full disk under `JR2_HARNESS_DATA_DIR`, ADR-0177)
 * answers an admission 503 `JR2_ERR_HARNESS_STORE_FAILING` with `Retry-After`: nothing was
 * admitted, and it admits again once a commit succeeds. Such an answer is "not now", not a
 * refusal of the Turn (issue 24, ADR-0289): the Turn waits as told and admits again, for a
 * bounded time in all, each wait said on the run's feed.
 */
import type { AdmitResult } from "./harness-client.js";

/** How long a Turn waits in all for the Harness store by default, ms. */
export const STORE_FAILING_WAIT_MS = 10 * 60_000;

/** One wait's bounds, ms: a missing or odd `Retry-After` waits 5 s; none is longer than 60 s. */
const WAIT_DEFAULT_MS = 5_000;
const WAIT_MAX_MS = 60_000;

/** The code of the answer this file handles. */
const STORE_FAILING = "JR2_ERR_HARNESS_STORE_FAILING";

/** What to do with a refusal: wait `waitMs` and admit again, saying `reason`; undefined: fault as before. */
export interface StoreFailingWait {
  waitMs: number;
  reason: string;
}

/**
 * Whether `result` is the Harness store's 503 and the Turn may still wait for it.
 * @param waitedMs - how long this admission has already waited for the store
 * @param boundMs - the Turn's bound ({@link STORE_FAILING_WAIT_MS} by default)
 * @returns the next wait, or undefined (not this refusal, or the bound is spent)
 */
export function storeFailingWait(
  result: Extract<AdmitResult, { kind: "refused" }>,
  waitedMs: number,
  boundMs: number,
): StoreFailingWait | undefined {
  const body = (typeof result.body === "object" && result.body !== null ? result.body : {}) as Record<
    string,
    unknown
  >;
  if (result.status !== 503 || body.code !== STORE_FAILING) return undefined;
  const told = result.retryAfterS ?? (typeof body.retryAfter === "number" ? body.retryAfter : undefined);
  const wanted = told === undefined || !Number.isFinite(told) || told < 0 ? WAIT_DEFAULT_MS : told * 1000;
  const waitMs = Math.min(wanted, WAIT_MAX_MS, boundMs - waitedMs);
  if (waitMs <= 0) return undefined;
  const said = typeof body.error === "string" ? body.error : STORE_FAILING;
  return {
    waitMs,
    reason:
      `the Harness store refuses writes (${said}); admitting again in ${Math.round(waitMs / 100) / 10} s ` +
      `(Retry-After), waited ${Math.round(waitedMs / 1000)} s of at most ${Math.round(boundMs / 1000)} s`,
  };
}
