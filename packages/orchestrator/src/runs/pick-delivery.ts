/**
 * The pick path of the run host, `POST /agents/:iid/picks` (§4.3), in the order a pick lives
 * it (docs/reference/lifecycle.md "The run host around a pick"): in the run's chain, the
 * replay check (a stored answer, ADR-0252) → the live Turn → decide (`decidePick`, pure) →
 * deliver and settle → save with the answer → release the feed → answer. The decision is
 * `menu/delivery.ts`; the effects around it are here.
 * @see SPEC §4.3, §4.4, §8; ADR-0050, ADR-0051, ADR-0252, ADR-0253
 */
import type { Context } from "@jr2/telemetry";
import { Jr2Error, type PickAnswer, type PickRequest } from "@jr2/wire";
import { crashPoint } from "../durability/crash-points.js";
import { decidePick, type PickDecision } from "../menu/delivery.js";
import { type Caller, mayReach } from "../turns/access.js";
import type { Registration } from "../turns/registration-table.js";
import type { FeedEntry } from "./feed.js";
import { storeFailing } from "./frozen-runs.js";
import { type HostState, saveOrStop, serialized } from "./host-state.js";
import { movedOr404, refuseIfMoved } from "./let-go.js";
import type { LiveRun } from "./live-run.js";
import { allowedOf, liveRegistration, liveRunOfTurn, runIdOfIid } from "./live-turns.js";
import { pickParent, tracePick } from "./run-telemetry.js";
import { turnRecordAfterPick } from "./turn-records.js";
import { recordPickAnswer } from "./turn-registration.js";

/**
 * Delivers `pick` to the live Turn at `iid`, at most once per (iid, turnId, toolCallId):
 * a repeated pick gets its stored answer, never a second delivery (ADR-0252). `trace`: the
 * request's `traceparent` context (the Harness's Submission span), the parent of the pick's
 * `jr2.pick` span (ADR-0421).
 * @throws JR2_ERR_SERVICE_STOPPING, JR2_ERR_STORE_FAILING (the store cannot be read, the run
 *   is frozen or the save failed), JR2_ERR_RUN_MOVED (this instance let the run go: its lease
 *   moved, ADR-0280), JR2_ERR_TURN_NOT_FOUND (no live Turn the caller may reach,
 *   or a pick of an ended Turn)
 * @see SPEC §4.3
 */
export async function deliverPick(
  state: HostState,
  iid: string,
  caller: Caller,
  pick: PickRequest,
  trace?: Context,
): Promise<PickAnswer> {
  if (state.stopping) throw new Jr2Error("JR2_ERR_SERVICE_STOPPING");
  const runId = runIdOfIid(iid);
  const startedAt = Date.now();
  return serialized(state, runId, async () => {
    const stored = await storedAnswer(state, runId, iid, caller, pick);
    if (stored) return stored;
    // A run this instance let go of, or no longer holds, takes no pick here (ADR-0280).
    await refuseIfMoved(state, runId);
    const registration = await movedOr404(state, runId, () => liveTurn(state, runId, iid, caller, pick));
    const run = liveRunOfTurn(state, registration);
    const answer = await deliverAndSave(state, run, registration, pick);
    logAnswered(state, registration, pick, answer);
    const parent = pickParent(trace, run.ledger.get(iid)?.traceparent);
    tracePick(state.telemetry, registration, run.workflow, pick, answer, parent, startedAt);
    // Committed and logged, not yet told: the Harness re-sends, and gets the stored answer.
    crashPoint("pick-delivered");
    return answer;
  });
}

/**
 * Check 0, per Turn (ADR-0252; a continued conversation's next Turn may reuse a toolCallId):
 * the answer stored for (iid, turnId, toolCallId) when the caller may reach its scope.
 * @throws JR2_ERR_STORE_FAILING when the store cannot be read (an I/O error answers 503 like
 *   one that cannot be written)
 */
async function storedAnswer(
  state: HostState,
  runId: string,
  iid: string,
  caller: Caller,
  pick: PickRequest,
): Promise<PickAnswer | undefined> {
  const { toolCallId, turnId } = pick;
  const known = await state.persistence
    .pickAnswer(runId, { iid, toolCallId, ...(turnId ? { turnId } : {}) })
    .catch((error: unknown) => {
      state.log.error({ runId, iid, err: error }, "reading the stored answer failed");
      throw storeFailing(error instanceof Error ? error.message : String(error), { runId });
    });
  if (!known || !mayReach(caller, known.scope)) return undefined;
  state.log.info(
    { runId, iid, turnId: known.turnId, pick: pick.name, toolCallId },
    "pick repeated: the stored answer",
  );
  return known.answer;
}

/**
 * The live Turn the pick is for (checks 0b and 1).
 * @throws JR2_ERR_STORE_FAILING (a frozen run takes no pick: the Harness re-sends it once the
 *   run is reloaded), JR2_ERR_SERVICE_STOPPING, JR2_ERR_TURN_NOT_FOUND (no live registration,
 *   another scope's, or the pick names an ended Turn: never delivered into the Turn that now
 *   holds the iid)
 */
function liveTurn(
  state: HostState,
  runId: string,
  iid: string,
  caller: Caller,
  pick: PickRequest,
): Registration {
  state.frozenRuns.refuseIfFrozen(runId);
  const registration = liveRegistration(state, iid, caller);
  const { turnId, toolCallId } = pick;
  if (turnId !== undefined && turnId !== registration.turnId) {
    state.log.info(
      { runId, iid, turnId, liveTurnId: registration.turnId, pick: pick.name, toolCallId },
      "pick of an ended Turn: 404",
    );
    throw new Jr2Error("JR2_ERR_TURN_NOT_FOUND", { iid });
  }
  return registration;
}

/**
 * Decides and delivers the pick with the run's saves and feed held: its effect is committed
 * only together with its answer, and answered only after (§4.3); the feed shows the pick before
 * the states and status it caused, and only once it is saved — the events ride that save.
 * @throws JR2_ERR_STORE_FAILING (the save failed: the run is frozen), JR2_ERR_SERVICE_STOPPING
 */
async function deliverAndSave(
  state: HostState,
  run: LiveRun,
  registration: Registration,
  pick: PickRequest,
): Promise<PickAnswer> {
  // The Worktree commits the Harness made before this pick ride its save (issue 28 §3).
  for (const [key, commit] of Object.entries(pick.commit ?? {})) run.repoCommits.set(key, commit);
  const releaseSaves = state.persistence.hold(run);
  const releaseFeed = run.feed.hold();
  let committed: (ok: boolean) => void = () => {};
  try {
    let answer: PickAnswer;
    try {
      answer = await decideAndDeliver(state, run, registration, pick);
    } finally {
      releaseSaves();
    }
    // Numbered now, so the pick and what it caused ride the save with its answer (ADR-0256);
    // told to followers once that commits.
    releaseFeed(
      [pickFeedEntry(registration, pick, answer)],
      new Promise<boolean>((resolve) => {
        committed = resolve;
      }),
    );
    await saveWithAnswer(state, run, registration, pick, answer);
    committed(true);
    return answer;
  } finally {
    committed(false);
    releaseFeed([]);
  }
}

/** `decidePick` (checks 2–7), then the answer: undelivered as decided, or delivered and settled. */
async function decideAndDeliver(
  state: HostState,
  run: LiveRun,
  registration: Registration,
  pick: PickRequest,
): Promise<PickAnswer> {
  const decision = decidePick(registration.turnActor, { name: pick.name, arguments: pick.arguments });
  if (decision.action === "answer") return undeliveredAnswer(state, registration, decision);
  // A publish this pick causes names it (ADR-0226); its feed event comes after the transition.
  run.pickInDelivery = pickOf(registration, pick);
  try {
    return await deliverAndSettle(state, run, registration, decision);
  } finally {
    run.pickInDelivery = undefined;
  }
}

/** The answer of a pick `decidePick` refused or found not moving (checks 2–6). */
function undeliveredAnswer(
  state: HostState,
  registration: Registration,
  decision: Extract<PickDecision, { action: "answer" }>,
): PickAnswer {
  return {
    delivered: false,
    ...(decision.moved === undefined ? {} : { moved: decision.moved }),
    turnComplete: turnComplete(state, registration),
    allowed: allowedOf(state, registration),
    ...(decision.refusal ? { refusal: decision.refusal } : {}),
    ...(decision.issues ? { issues: decision.issues } : {}),
  };
}

/** Check 7: sends the event to the invoker, lets every actor of the run settle, reads the answer. */
async function deliverAndSettle(
  state: HostState,
  run: LiveRun,
  registration: Registration,
  decision: Extract<PickDecision, { action: "deliver" }>,
): Promise<PickAnswer> {
  decision.target.send(decision.event);
  await run.settle();
  return {
    delivered: true,
    moved: decision.moved,
    turnComplete: turnComplete(state, registration),
    allowed: allowedOf(state, registration),
  };
}

/** The Turn is over when the registration at its iid is not this very one (identity, §4.3). */
function turnComplete(state: HostState, registration: Registration): boolean {
  return state.registrations.get(registration.iid) !== registration;
}

/** Saves the run with the pick's answer and the Turn's record in one transaction (§4.3), then records it on the Turn. */
async function saveWithAnswer(
  state: HostState,
  run: LiveRun,
  registration: Registration,
  pick: PickRequest,
  answer: PickAnswer,
): Promise<void> {
  const { iid, turnId, scope } = registration;
  const turn = answer.delivered
    ? turnRecordAfterPick(registration.turnActor, pick.name, pick.arguments, answer.moved)
    : undefined;
  await saveOrStop(state, run, [
    { iid, turnId, toolCallId: pick.toolCallId, scope, answer, ...(turn ? { turn } : {}) },
  ]);
  recordPickAnswer(registration, pick.name, answer, pick.arguments);
}

/** The feed's `pick` event: the child is `<state>#<agent>`, never the iid. */
function pickFeedEntry(registration: Registration, pick: PickRequest, answer: PickAnswer): FeedEntry {
  return { type: "pick", ...pickOf(registration, pick), answer };
}

/** Who picked what: the feed entry's fields and the run's `pickInDelivery`. */
function pickOf(registration: Registration, pick: PickRequest): NonNullable<LiveRun["pickInDelivery"]> {
  return {
    child: `${registration.statePath}#${registration.agent}`,
    agent: registration.agent,
    name: pick.name,
    ...(pick.arguments === undefined ? {} : { arguments: pick.arguments }),
  };
}

function logAnswered(
  state: HostState,
  registration: Registration,
  pick: PickRequest,
  answer: PickAnswer,
): void {
  state.log.info(
    {
      runId: registration.runId,
      agent: registration.agent,
      iid: registration.iid,
      turnId: registration.turnId,
      pick: pick.name,
      toolCallId: pick.toolCallId,
      delivered: answer.delivered,
      moved: answer.moved,
    },
    "pick answered",
  );
}
