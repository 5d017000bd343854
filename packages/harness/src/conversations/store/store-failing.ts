import { dirname } from "node:path";
import { Jr2Error } from "@jr2/wire";
import type { HarnessStore } from "./harness-store.js";

/** Seconds a refused client is told to wait (`Retry-After`): a retry is cheap, space may return soon. */
export const HARNESS_STORE_RETRY_AFTER_S = 5;

/**
 * The 503 `JR2_ERR_HARNESS_STORE_FAILING` for a store whose commits fail (ADR-0177): names the
 * data dir, why, and the fix; `retryAfter` seconds.
 */
export function harnessStoreFailing(store: HarnessStore, detail: string): Jr2Error {
  return new Jr2Error("JR2_ERR_HARNESS_STORE_FAILING", {
    dataDir: store.path === ":memory:" ? ":memory:" : dirname(store.path),
    detail,
    retryAfter: HARNESS_STORE_RETRY_AFTER_S,
  });
}

/** @throws the 503 `JR2_ERR_HARNESS_STORE_FAILING` while the store refuses writes */
export function refuseWhileFailing(store: HarnessStore): void {
  const failure = store.failing();
  if (failure) throw harnessStoreFailing(store, failure.detail);
}

/**
 * Commits the queued writes before something durable is answered.
 * @throws the 503 `JR2_ERR_HARNESS_STORE_FAILING` when the commit fails (the writes stay queued)
 */
export function flushOrRefuse(store: HarnessStore): void {
  try {
    store.flush();
  } catch (err) {
    throw harnessStoreFailing(store, err instanceof Error ? err.message : String(err));
  }
}
