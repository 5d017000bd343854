/**
 * A run start with an `Idempotency-Key` (issue 24 item 6, ADR-0282): the same key within 24 h
 * answers the same run. The key is reserved with the run id about to be minted *before* the run
 * starts, so a retry that arrives while the first start is still under way (its client timed
 * out) waits for that run instead of starting another; a start that fails forgets its key.
 * @see SPEC §4.1 (`POST /workflows/:name/runs`)
 */
import { Jr2Error } from "@jr2/wire";
import { createMemoryStartKeys, type StartKeys } from "../durability/store/start-keys.js";
import type { HostState } from "./host-state.js";
import { startRun } from "./run-table.js";

/** An idempotency key: 1–255 visible ASCII characters (a UUID is the usual one). */
const KEY = /^[\x21-\x7e]{1,255}$/;

/** How long a retry waits for the first start's run to be saved (ms) before answering 409. */
const WAIT_MS = 10_000;

/** A host given a store without start keys keeps them in memory (one per host). */
const fallback = new WeakMap<HostState, StartKeys>();

function keysOf(state: HostState): StartKeys {
  if (state.store.startKeys) return state.store.startKeys;
  let keys = fallback.get(state);
  if (!keys) {
    keys = createMemoryStartKeys();
    fallback.set(state, keys);
  }
  return keys;
}

/**
 * Starts a run of `workflow` once per `key`: `replayed: false` for the start that made it,
 * `true` for a repeat (the route answers it 200 instead of 201).
 * @throws JR2_ERR_IDEMPOTENCY_KEY_INVALID (400) for a key that is not 1–255 visible ASCII;
 *   JR2_ERR_IDEMPOTENCY_KEY_CONFLICT (409) when the key names a run of another workflow, or the
 *   first start has not saved its run within 10 s (`retryAfter`); and what `startRun` throws
 */
export async function startRunOnce(
  state: HostState,
  workflow: string,
  input: unknown,
  key: string,
): Promise<{ runId: string; replayed: boolean }> {
  if (!KEY.test(key))
    throw new Jr2Error("JR2_ERR_IDEMPOTENCY_KEY_INVALID", {
      detail:
        key.length > 255
          ? `is ${key.length} characters`
          : "holds a space, a control or a non-ASCII character",
    });
  const keys = keysOf(state);
  const mine = state.mintRunId();
  const held = await keys.reserve(key, workflow, mine, state.now().getTime());
  if (!held.fresh) {
    if (held.workflow !== workflow)
      throw new Jr2Error("JR2_ERR_IDEMPOTENCY_KEY_CONFLICT", {
        detail: `run \`${held.runId}\` of workflow \`${held.workflow}\`, not \`${workflow}\``,
      });
    await savedWithin(state, held.runId, WAIT_MS);
    state.log.info({ runId: held.runId, workflow }, "run start repeated with its idempotency key");
    return { runId: held.runId, replayed: true };
  }
  try {
    return { ...(await startRun(state, workflow, input, mine)), replayed: false };
  } catch (error) {
    await keys.forget(key, mine).catch(() => {});
    throw error;
  }
}

/** Resolves once `runId` is live here or stored; @throws JR2_ERR_IDEMPOTENCY_KEY_CONFLICT after `ms`. */
async function savedWithin(state: HostState, runId: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (state.runs.has(runId) || (await state.store.load(runId).catch(() => undefined))) return;
    if (Date.now() >= until)
      throw new Jr2Error("JR2_ERR_IDEMPOTENCY_KEY_CONFLICT", {
        detail: `run \`${runId}\`, whose start is still under way (or failed)`,
        retryAfter: 2,
      });
    await new Promise((r) => setTimeout(r, 100));
  }
}
