/**
 * The live Turns of a host's runs as the host serves them: starting one (the run binding's
 * `startTurn`, wired to this host's saves, driver and placement), the registration a caller may
 * reach at an iid, its Allowed picks now, and `GET /agents/:iid/surface`.
 * @see SPEC §4.3, §4.4, §5.1; ADR-0050, ADR-0051
 */
import { Jr2Error, type Surface } from "@jr2/wire";
import { readAllowedPicks } from "../menu/allowed-picks.js";
import { type Caller, mayReach } from "../turns/access.js";
import { type Placement, placeTurn } from "../turns/placement.js";
import type { Registration } from "../turns/registration-table.js";
import type { TurnStart } from "../xstate/run-binding.js";
import { type HostState, saveOrStop } from "./host-state.js";
import { confirmHeld } from "./let-go.js";
import type { LiveRun } from "./live-run.js";
import { registerTurn } from "./turn-registration.js";

/** The run id an iid was minted under (§5.3): `<runId>/…`. */
export function runIdOfIid(iid: string): string {
  return iid.split("/", 1)[0] ?? iid;
}

/**
 * The live registration at `iid`, if `caller` may reach its scope (§4.4).
 * @throws JR2_ERR_SERVICE_STOPPING, JR2_ERR_TURN_NOT_FOUND (none, or another scope's)
 */
export function liveRegistration(state: HostState, iid: string, caller: Caller): Registration {
  if (state.stopping) throw new Jr2Error("JR2_ERR_SERVICE_STOPPING");
  const registration = state.registrations.get(iid);
  if (!registration || !mayReach(caller, registration.scope))
    throw new Jr2Error("JR2_ERR_TURN_NOT_FOUND", { iid });
  return registration;
}

/** The Allowed picks of `registration` now: `[]` once it is not the live one at its iid. */
export function allowedOf(state: HostState, registration: Registration): string[] {
  return state.registrations.get(registration.iid) === registration
    ? readAllowedPicks(registration.turnActor)
    : [];
}

/** A live Turn's run. @throws JR2_ERR_TURN_NOT_FOUND when the run already left memory (settled) */
export function liveRunOfTurn(state: HostState, registration: Registration): LiveRun {
  const run = state.runs.get(registration.runId);
  if (!run) throw new Jr2Error("JR2_ERR_TURN_NOT_FOUND", { iid: registration.iid });
  return run;
}

/**
 * `GET /agents/:iid/surface`: the live Turn's Menu and Allowed picks.
 * @throws JR2_ERR_STORE_FAILING (its run is frozen), JR2_ERR_SERVICE_STOPPING,
 *   JR2_ERR_TURN_NOT_FOUND (also for another scope)
 */
export function readSurface(state: HostState, iid: string, caller: Caller): Surface {
  state.frozenRuns.refuseIfFrozen(runIdOfIid(iid));
  const registration = liveRegistration(state, iid, caller);
  return {
    iid,
    runId: registration.runId,
    agent: registration.agent,
    turnId: registration.turnId,
    menu: [...registration.menu],
    allowed: allowedOf(state, registration),
  };
}

/**
 * The host's `startTurn` hook: registers the Turn (see {@link registerTurn}) with this host's
 * driver, saves and placement; returns the stop its Agent slot calls. Never throws.
 */
export function startTurn(state: HostState, run: LiveRun, turn: TurnStart): () => void {
  const { placement } = state;
  return registerTurn(
    {
      registrations: state.registrations,
      turnDriver: state.turnDriver,
      log: state.log,
      allowedOf: (registration) => allowedOf(state, registration),
      // Stored answers carry their scope (§4.4): nothing per iid is kept after its Turn.
      rememberScope: () => {},
      save: (r) => saveOrStop(state, r),
      recordUsage: (r, record) => state.persistence.recordUsage(r, record),
      recordTranscript: (r, row) => state.persistence.recordTranscript(r, row),
      recordTurn: (r, t, ends) => state.persistence.recordTurn(r, t, ends),
      recordHistory: (r, iid, part) => state.persistence.recordHistory(r, iid, part),
      dropHistory: (r, iid) => state.persistence.dropHistory(r, iid),
      // A frozen run's Turns stop as at shutdown: no Harness effect leaves (ADR-0253); so do
      // those of a run let go (its frozen is set too, ADR-0280).
      shuttingDown: () => state.stopping || run.frozen,
      // Checked before every Harness call sent for the run (ADR-0280), by the database's answer
      // once this instance's clock lapsed (ADR-0283).
      holdsLease: (r) => confirmHeld(state, r),
      ...(state.ownership ? { instanceId: state.ownership.instanceId } : {}),
      afterCommit: (r, fn) => state.persistence.afterCommit(r, fn),
      ...(placement
        ? {
            place: (runId: string, statePath: string, turn: TurnStart) =>
              oneWriterPerWorktree(state, run, statePath, turn, placeTurn(placement, runId, statePath, turn)),
          }
        : {}),
    },
    run,
    turn,
  );
}

/**
 * One live `write` Turn per Repo-Slot Worktree (issue 28 §3): a second is refused at
 * registration, naming both states (`JR2_ERR_WORKSPACE_WRITER_BUSY`); two writers would commit
 * each other's half-made changes under their own picks. Plain workspaces keep ADR-0153's rules.
 */
function oneWriterPerWorktree(
  state: HostState,
  run: LiveRun,
  statePath: string,
  turn: TurnStart,
  placed: Placement,
): Placement {
  if (placed.kind !== "placed" || !placed.cwd || turn.definition.workspace !== "write") return placed;
  const worktrees = [...run.repoSlots.values()].map((s) => s.path);
  if (!worktrees.includes(placed.cwd)) return placed;
  const holder = state.registrations
    .ofRun(run.runId)
    .find((r) => r.cwd === placed.cwd && r.definition.workspace === "write" && r.iid !== turn.input.iid);
  if (!holder) return placed;
  return {
    kind: "unplaced",
    reason: `JR2_ERR_WORKSPACE_WRITER_BUSY: the Worktree \`${placed.cwd}\` already has a live write Turn (state \`${holder.statePath}\`, Agent \`${holder.agent}\`); the Turn of Agent \`${turn.input.agentName}\` in state \`${statePath}\` must wait for it or use its own Repo Slot`,
  };
}
