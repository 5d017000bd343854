/**
 * Letting go of a run (ADR-0280 "Letting go"): an instance that finds its lease on a run lost
 * — a renewal that misses it, a write the fence refused, or `holds()` false before a Harness
 * call — stops that run as a shutdown stops every run: its actors stopped unsaved (its Turns
 * see `shuttingDown()` true, so no remote abort leaves), nothing saved or told, no pick
 * answered (`JR2_ERR_RUN_MOVED`, a 503: the Harness tries its next URL), out of memory. The
 * instance that holds the lease now restores it from its last commit, as after a restart.
 * @see SPEC §8; ADR-0280
 */
import { Jr2Error } from "@jr2/wire";
import type { HostState } from "./host-state.js";
import type { LiveRun } from "./live-run.js";

/**
 * Lets go of `runId` now; `why` is logged. Idempotent; a run not in memory only gives its
 * lease back (a no-op when not held). The old incarnation is torn down before this returns
 * (ADR-0283): its actor stopped, every Turn of it ended as at shutdown (registration removed,
 * driver and readers stopped), so an adoption by this same process later finds no live
 * surface of it. Never throws.
 */
export function letGoOfRun(state: HostState, runId: string, why: string): void {
  const run = state.runs.get(runId);
  if (run && !run.movedAway) {
    // Both: `frozen` keeps every save, retry and outbox effect of it from running (ADR-0253's
    // machinery), `movedAway` says why (its Turns stop as at shutdown, its saves answer 503).
    run.movedAway = true;
    run.frozen = true;
    state.persistence.letGo(run);
    state.runs.delete(runId);
    try {
      run.actor.stop();
    } catch (error) {
      state.log.error({ runId, err: error }, "stopping the run let go of threw");
    }
    tearDown(state, run);
    logLetGo(state, runId, why);
  }
  // Not renewed again (so it expires for an adopter) — a no-op when another instance holds it.
  state.ownership
    ?.release(runId)
    .catch((error: unknown) => state.log.warn({ runId, err: error }, "giving the lease back failed"));
}

/**
 * Ends what may outlive the stopped actor of `run` (ADR-0283): a stop xstate defers (a let-go
 * from inside the run's own transition, or during its restore) used to leave a Turn registered
 * and reading, so re-adopting the run in this process met "already live" (a `conflict` fault).
 */
export function tearDown(state: HostState, run: LiveRun): void {
  for (const end of [...run.turnEnds]) end();
  for (const left of state.registrations.ofRun(run.runId)) state.registrations.deregister(left);
  run.readers.abort();
}

/** Logs the let-go with the lease as the store has it now (who holds it, its epoch). */
function logLetGo(state: HostState, runId: string, why: string): void {
  const instanceId = state.ownership?.instanceId;
  const said = (holder?: { instanceId: string; epoch: number }) => {
    // Only the database's answer lets a run go (ADR-0283): a missed renewal or a fence means
    // the epoch moved on — under our own id, a twin.
    if (holder && holder.instanceId === instanceId) warnSameId(state, runId, holder.epoch);
    state.log.info(
      { runId, why, instanceId, ...(holder ? { heldBy: holder.instanceId, epoch: holder.epoch } : {}) },
      "let go of the run: another instance holds it now",
    );
  };
  if (!state.ownership) {
    said();
    return;
  }
  state.ownership.holder(runId).then(
    (holder) => said(holder),
    () => said(),
  );
}

/**
 * Logs loudly that another live process took a lease under this instance's own id: two
 * Orchestrators were given the same `JR2_INSTANCE_ID` (or a paused one resumed after its
 * replacement started). Each run stays with one of them (ADR-0280 "Instance identity").
 */
function warnSameId(state: HostState, runId: string, epoch: number): void {
  state.log.error(
    { runId, instanceId: state.ownership?.instanceId, epoch },
    "another Orchestrator process holds this run's lease under this instance's own JR2_INSTANCE_ID: give every instance its own JR2_INSTANCE_ID (or leave it unset: it defaults to JR2_ADVERTISE_URL)",
  );
}

/**
 * Whether this instance may act for `run` now — send a Harness call, decide a pick — by its own
 * clock: true without ownership (an embedded store), for a run it settled (its lease row went
 * with the settling save; the aborts that save owes still leave), or while its lease is held by
 * this instance's clock. False once let go. A lapsed clock check lets nothing go (ADR-0283): it
 * answers false and asks the database at once ({@link confirmHeld} waits for that answer).
 */
export function holdsRun(state: HostState, run: LiveRun): boolean {
  const { ownership } = state;
  if (!ownership) return true;
  if (run.movedAway) return false;
  if (run.status !== "running" || ownership.holds(run.runId)) return true;
  void state.ownershipLoop?.renewNow();
  return false;
}

/**
 * {@link holdsRun}, but a lapsed clock check is settled by the database (ADR-0283): a renewal
 * is sent (or the one under way awaited) and its answer decides — renewed with our epoch: held
 * (the clock counts again from that renewal); found lost: the run is let go, false. A store
 * that cannot be reached answers false and lets nothing go (nothing is sent meanwhile).
 */
export async function confirmHeld(state: HostState, run: LiveRun): Promise<boolean> {
  if (holdsRun(state, run)) return true;
  if (run.movedAway || !state.ownershipLoop) return false;
  await state.ownershipLoop.renewNow();
  return holdsRun(state, run);
}

/**
 * Refuses a request for a run this instance let go of, or does not hold by the database's
 * answer (a pick, a Gate event): nothing is decided here. @throws JR2_ERR_RUN_MOVED (503)
 */
export async function refuseIfMoved(state: HostState, runId: string): Promise<void> {
  const run = state.runs.get(runId);
  if (run && !(await confirmHeld(state, run))) throw new Jr2Error("JR2_ERR_RUN_MOVED", { runId });
}

/**
 * `find()` (the live Turn of a pick), except that on a shared store a run not in memory that
 * has a lease row (another instance's, or one awaiting adoption) answers 503 `JR2_ERR_RUN_MOVED`, not 404:
 * the Harness must try the run's owner, not read "the Turn is over". One store read, only on
 * that miss. @throws what `find` throws, or JR2_ERR_RUN_MOVED
 */
export async function movedOr404<T>(state: HostState, runId: string, find: () => T): Promise<T> {
  try {
    return find();
  } catch (error) {
    const { ownership } = state;
    if (!ownership || state.runs.has(runId) || !(error instanceof Jr2Error)) throw error;
    if (error.code !== "JR2_ERR_TURN_NOT_FOUND") throw error;
    // Any lease row: the run is live somewhere or about to be (this instance's own id included:
    // it let the run go and an adoption is due). Only a run without one has no live Turn.
    const holder = await ownership.holder(runId).catch(() => undefined);
    if (holder) throw new Jr2Error("JR2_ERR_RUN_MOVED", { runId });
    throw error;
  }
}
