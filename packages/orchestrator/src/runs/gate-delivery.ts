/**
 * The Gates of a run as the host serves them (§6): announced on the feed after each settled
 * burst, listed, and sent to — `POST /runs/:runId/gates/:gateId/events`, in the run's chain:
 * the open Gate → decide (`decideGateEvent`, pure) → deliver and settle → save → answer.
 * The decision is `menu/gate-decisions.ts`; the effects are here.
 * @see SPEC §6; docs/reference/lifecycle.md "A Gate send"
 */
import { type Gate, type GateEventAnswer, Jr2Error } from "@jr2/wire";
import { decideGateEvent } from "../menu/gate-decisions.js";
import { type HostState, saveOrStop, serialized } from "./host-state.js";
import type { LiveRun } from "./live-run.js";
import type { GatedRun, OpenGate } from "./open-gates.js";
import { runOf, storedBlob } from "./run-table.js";
import { gateOf } from "./run-views.js";

/** A Gate event's body: its type and payload. */
export type GateEventBody = { type: string } & Record<string, unknown>;

/** Who answered a Gate (the feed's `gate-answered.by`): the `x-jr2-client` header, default `http`. */
export type GateClient = "cli" | "http" | "console";

/**
 * Sends `body` to the open Gate `gateId` of the running run `runId`; resolves once the run
 * settled and its save committed.
 * @throws JR2_ERR_STORE_FAILING (frozen, or the save failed), JR2_ERR_RUN_NOT_FOUND,
 *   JR2_ERR_RUN_NOT_LIVE, JR2_ERR_GATE_NOT_FOUND, JR2_ERR_GATE_EVENT_NOT_ACCEPTED,
 *   JR2_ERR_GATE_PAYLOAD_INVALID, JR2_ERR_GATE_NOT_NOW (with `acceptsNow`)
 * @see SPEC §6
 */
export function sendGateEvent(
  state: HostState,
  runId: string,
  gateId: string,
  body: GateEventBody,
  by: GateClient = "http",
): Promise<GateEventAnswer> {
  return serialized(state, runId, async () => {
    state.frozenRuns.refuseIfFrozen(runId);
    const run = await runningRun(state, runId);
    const gate = openGateOf(run, gateId);
    const decision = decideGateEvent(gate.actor, body);
    if (decision.action === "refuse")
      throw new Jr2Error(decision.code, { runId, gateId, type: body.type, ...decision.fields });
    // Before the send: the feed shows the answer before the states it caused; it rides their save.
    run.feed.append({ type: "gate-answered", gate: gateId, event: body.type, by });
    decision.target.send(decision.event);
    await run.settle();
    await saveOrStop(state, run);
    state.log.info({ runId, gate: gateId, type: body.type }, "Gate event delivered");
    return { moved: true as const };
  });
}

/** The run's open Gates (none once it settled). @throws JR2_ERR_RUN_NOT_FOUND */
export async function listGates(state: HostState, runId: string): Promise<Gate[]> {
  const run = state.runs.get(runId);
  if (run) return [...run.gates.values()].map((gate) => gateOf(gate.actor));
  await storedBlob(state, runId);
  return [];
}

/** After each settled burst: a `gate` feed event for each Gate that opened or whose acceptsNow changed. */
export function announceGates(run: GatedRun): void {
  if (run.status !== "running") return;
  for (const gate of run.gates.values()) {
    const reading = gateOf(gate.actor);
    const key = JSON.stringify(reading.acceptsNow);
    if (gate.announced === key) continue;
    gate.announced = key;
    run.feed.append({ type: "gate", gate: reading, since: gate.openedAt });
  }
}

/** The run, in memory and running. @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_NOT_LIVE */
async function runningRun(state: HostState, runId: string): Promise<LiveRun> {
  const run = await runOf(state, runId);
  if (run.status !== "running") throw new Jr2Error("JR2_ERR_RUN_NOT_LIVE", { runId, status: run.status });
  return run;
}

/** The open Gate `gateId` of `run`. @throws JR2_ERR_GATE_NOT_FOUND (naming the open ones) */
function openGateOf(run: LiveRun, gateId: string): OpenGate {
  const gate = run.gates.get(gateId);
  if (!gate)
    throw new Jr2Error("JR2_ERR_GATE_NOT_FOUND", { runId: run.runId, gateId, open: [...run.gates.keys()] });
  return gate;
}
