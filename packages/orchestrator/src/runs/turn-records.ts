/**
 * Each Turn's record (ADR-0257): written when its Turn registers, again when a pick of it is
 * delivered, when it faults and when its state exits — what `GET /runs/:runId/turns` lists. A
 * Turn restored after a restart keeps its stored record (its start time, a pick already made).
 * A record of a Turn whose registration is not committed, and a Turn's end, ride the run's next
 * save (persistence's `recordTurn`, ADR-0296).
 * @see SPEC §4.3, §5.1; issue 11 item 3
 */
import type { AnyActorRef } from "xstate";
import type { TurnRecord } from "../durability/transcript-rows.js";
import type { LiveRun } from "./live-run.js";

/**
 * Writes a Turn record of a run to the store (persistence's `recordTurn`); `ends`: the record
 * reports the Turn's state exit (it rides that exit's save, ADR-0296).
 */
export type RecordTurn = (run: LiveRun, turn: TurnRecord, ends?: boolean) => void;

/** A live Turn's record and how it is written, by its Turn actor (a reseat keeps the actor). */
const tracked = new WeakMap<AnyActorRef, { run: LiveRun; record: RecordTurn; turn: TurnRecord }>();

/** The Turn's seat as the record names it. */
export interface TurnRecordSeat {
  turnId: string | null;
  agent: string;
  state: string;
  iid: string;
}

/**
 * A Turn registered: its record is running (a restored Turn keeps its start, pick and fault).
 * Turns without a turnId (§5.4) have no record.
 */
export function turnStarted(
  run: LiveRun,
  actor: AnyActorRef,
  seat: TurnRecordSeat,
  record: RecordTurn | undefined,
  now = new Date(),
): void {
  if (seat.turnId === null || !record) return;
  const stored = run.turns.get(seat.turnId);
  const turn: TurnRecord = {
    pick: null,
    ...stored,
    turnId: seat.turnId,
    agent: seat.agent,
    state: seat.state,
    iid: seat.iid,
    startedAt: stored?.startedAt ?? now.toISOString(),
    endedAt: null,
    outcome: stored?.outcome === "faulted" ? "faulted" : "running",
  };
  tracked.set(actor, { run, record, turn });
  write(run, record, turn);
}

/**
 * The Turn's record as a delivered pick leaves it, not written: a pick's save carries it in its
 * own transaction, so a stop or a kill between that commit and {@link turnPicked}'s queued write
 * cannot leave the Turn `left` with no pick. Undefined when the Turn has no record.
 */
export function turnRecordAfterPick(
  actor: AnyActorRef,
  name: string,
  args: unknown,
  moved: boolean | undefined,
): TurnRecord | undefined {
  const t = tracked.get(actor);
  return t ? afterPick(t.turn, name, args, moved) : undefined;
}

/**
 * A pick of the Turn was delivered (told after its save committed: the Turn may have ended by
 * then — the pick ended it); `moved`: it moved the Machine (the Turn's outcome is `picked`).
 */
export function turnPicked(
  actor: AnyActorRef,
  name: string,
  args: unknown,
  moved: boolean | undefined,
): void {
  const t = tracked.get(actor);
  if (!t) return;
  t.turn = afterPick(t.turn, name, args, moved);
  write(t.run, t.record, t.turn);
}

function afterPick(turn: TurnRecord, name: string, args: unknown, moved: boolean | undefined): TurnRecord {
  // While the Turn runs, its newest pick (an in-state move); once ended, the pick that ended it
  // (`picked`) — an in-state pick told after another cause ended it leaves it `left`, with that pick.
  const ended = turn.endedAt !== null && moved !== false && turn.outcome === "left";
  return {
    ...turn,
    pick: { name, arguments: args ?? null },
    ...(ended ? { outcome: "picked" as const } : {}),
  };
}

/** The Turn sent `agent.fault`: its outcome is `faulted`, with the fault. */
export function turnFaulted(
  actor: AnyActorRef,
  fault: { reason: string; detail?: string; cause?: string },
): void {
  const t = tracked.get(actor);
  if (!t) return;
  t.turn = { ...t.turn, outcome: "faulted", fault };
  write(t.run, t.record, t.turn);
}

/** The Turn moved to conversation `iid` (a reseat, §5.3). */
export function turnMoved(actor: AnyActorRef, iid: string): void {
  const t = tracked.get(actor);
  if (!t) return;
  t.turn = { ...t.turn, iid };
  write(t.run, t.record, t.turn);
}

/**
 * The Turn's state exited: ended now; `faulted` after its fault, else `left` until its pick is
 * told. It keeps its last delivered pick (one that kept it in its state): ended otherwise — a
 * timer, a Gate, another Agent's pick — that is still the Turn's pick (ADR-0296 "The last pick
 * stays"). The record rides the exit's save. Not on shutdown.
 */
export function turnEnded(actor: AnyActorRef, now = new Date()): void {
  const t = tracked.get(actor);
  // Kept tracked: the pick that ended the Turn is recorded after its save commits, later.
  if (!t || t.turn.endedAt !== null) return;
  // The exit's own pick is told after its save commits (turnPicked), and its save carries it.
  const outcome = t.turn.outcome === "running" ? "left" : t.turn.outcome;
  t.turn = { ...t.turn, endedAt: now.toISOString(), outcome };
  write(t.run, t.record, t.turn, true);
}

/** A Turn refused before it registered (placement, conflict): one record, ended and faulted. */
export function turnRefused(
  run: LiveRun,
  seat: TurnRecordSeat,
  record: RecordTurn | undefined,
  fault: { reason: string; detail?: string },
  now = new Date(),
): void {
  if (seat.turnId === null || !record) return;
  const at = now.toISOString();
  const { turnId, agent, state, iid } = seat;
  write(run, record, {
    turnId,
    agent,
    state,
    iid,
    startedAt: at,
    endedAt: at,
    outcome: "faulted",
    pick: null,
    fault,
  });
}

function write(run: LiveRun, record: RecordTurn, turn: TurnRecord, ends = false): void {
  run.turns.set(turn.turnId, turn);
  record(run, turn, ends);
}
