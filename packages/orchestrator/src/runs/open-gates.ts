/**
 * A run's open Gates (§6): each `gate` actor opens one through the run binding and closes it
 * when it stops. The host announces them on the feed (`announceGates`, gate-delivery.ts).
 * @see SPEC §6
 */
import type { RunStatus } from "@jr2/wire";
import type { Logger } from "pino";
import type { AnyActorRef } from "xstate";
import type { GateStart } from "../xstate/run-binding.js";
import type { RunFeed } from "./feed.js";

/** An open Gate of a run, as its `gate` actor announced it (§6). */
export interface OpenGate {
  readonly id: string;
  readonly actor: AnyActorRef;
  /** When it opened (ISO-8601, the run's clock): the feed's "waiting since" (ADR-0256). */
  readonly openedAt: string;
  /** `acceptsNow` as last announced on the feed (JSON), or undefined before the first. */
  announced?: string;
}

/** What of a run its Gates live in (the `LiveRun` has it). */
export interface GatedRun {
  readonly runId: string;
  readonly status: RunStatus;
  readonly feed: RunFeed;
  readonly gates: Map<string, OpenGate>;
  /** The run's last change (its clock): a Gate opening now opened then. */
  readonly updatedAt: Date;
  /** A Gate opened since the last committed save (the `gate-open` crash point). */
  gatesUnsaved: boolean;
}

/** The run binding's `openGate`: records the Gate as open; returns its close. */
export function openGate(run: GatedRun, gate: GateStart, log: Logger): () => void {
  const open: OpenGate = { id: gate.id, actor: gate.self, openedAt: run.updatedAt.toISOString() };
  run.gates.set(gate.id, open);
  run.gatesUnsaved = true;
  log.info({ runId: run.runId, gate: gate.id }, "Gate opened");
  return () => {
    if (run.gates.get(gate.id) === open) run.gates.delete(gate.id);
  };
}
