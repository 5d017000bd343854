/**
 * The ownership loop (ADR-0280): on a shared store, every `leaseMs / 3` this instance renews
 * the leases it holds, lets go of those renewal found lost (another instance adopted them),
 * then adopts what it may take over (expired leases of workflows it serves) and restores it.
 * Never throws out: a store error is logged and tried again on the next tick. Ticks never
 * overlap; `stop()` ends it (on close) after the tick under way.
 * @see SPEC §8; ADR-0280
 */
import type { RestoreReport } from "../durability/restore.js";
import type { HostState } from "./host-state.js";

/** The running loop: `stop()` resolves once no tick is under way (none starts after). */
export interface OwnershipLoop {
  stop(): Promise<void>;
  /** Runs one tick now (after the one under way): tests and start-up. Never rejects. */
  tick(): Promise<void>;
  /**
   * Renews now and lets go of what the database says is lost (ADR-0283): how an instance whose
   * own clock check lapsed (event-loop lag, a pause) learns whether it still holds a lease.
   * Coalesced with a renewal under way. Never rejects; a store error leaves every lease as it was.
   */
  renewNow(): Promise<void>;
}

/**
 * Starts the loop of `state.ownership` (a no-op loop without one). `adopt`: the host's adoption
 * with its restore deps (run-adoption.ts).
 */
export function startOwnershipLoop(state: HostState, adopt: () => Promise<RestoreReport>): OwnershipLoop {
  const { ownership } = state;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let renewing: Promise<void> | undefined;
  const renewNow = (): Promise<void> => {
    renewing ??= renew(state).finally(() => {
      renewing = undefined;
    });
    return renewing;
  };
  const tick = (): Promise<void> => {
    running = running.then(() => (stopped ? undefined : once(state, renewNow, adopt)));
    return running;
  };
  if (!ownership) return { stop: async () => {}, tick, renewNow: async () => {} };
  const period = Math.max(1, Math.floor(ownership.leaseMs / 3));
  const timer = setInterval(() => void tick(), period);
  timer.unref?.();
  return {
    tick,
    renewNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * Renews and lets go of what the database's answer says is lost — only that: a renewal that
 * fails (the store unreachable) lets nothing go, and neither does this instance's own clock
 * (ADR-0283). Never throws.
 */
async function renew(state: HostState): Promise<void> {
  const { ownership, log } = state;
  if (!ownership || state.stopping) return;
  try {
    const { lost } = await ownership.renew();
    for (const runId of lost) state.letGo(runId, "renewing its lease found it held by another instance");
  } catch (error) {
    log.warn({ err: error, instanceId: ownership.instanceId }, "renewing the leases failed; trying again");
  }
}

/** One tick: renew → let go of the lost → adopt. Each step's failure is logged, never thrown. */
async function once(
  state: HostState,
  renewNow: () => Promise<void>,
  adopt: () => Promise<RestoreReport>,
): Promise<void> {
  const { ownership, log } = state;
  if (!ownership || state.stopping) return;
  await renewNow();
  if (state.stopping) return;
  try {
    await adopt();
  } catch (error) {
    log.warn({ err: error, instanceId: ownership.instanceId }, "adopting runs failed; trying again");
  }
}
