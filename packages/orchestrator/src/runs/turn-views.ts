/**
 * `GET /runs/:runId/turns` and `GET /runs/:runId/turns/:turnId` (ADR-0257): a run's Turns and
 * one Turn's transcript, read from the store (settled runs are not in memory, ADR-0260) — the
 * Turn records, the transcript rows, and each Turn's usage summed from its usage rows.
 * @see SPEC §4.1, §8; issue 11 item 3
 */
import { Jr2Error, type TurnList, type TurnSummary, type TurnTranscript } from "@jr2/wire";
import { recordOfRow, type TranscriptRow, type TurnRecord } from "../durability/transcript-rows.js";
import { sumUsage, type UsageRecord } from "../durability/usage-totals.js";
import type { HostState } from "./host-state.js";
import { storedBlob } from "./run-table.js";

/** The run's Turns in start order. @throws JR2_ERR_RUN_NOT_FOUND */
export async function listTurns(state: HostState, runId: string): Promise<TurnList> {
  await knownRun(state, runId);
  const [turns, usage] = await Promise.all([state.store.turns(runId), state.store.usage(runId)]);
  return { turns: turns.map((t) => summaryOf(t, usage)) };
}

/**
 * One Turn with its conversation's prefix and its entries in recording order (readable while
 * it runs). @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_TURN_NOT_FOUND
 */
export async function turnTranscript(
  state: HostState,
  runId: string,
  turnId: string,
): Promise<TurnTranscript> {
  await knownRun(state, runId);
  const turn = (await state.store.turns(runId)).find((t) => t.turnId === turnId);
  const rows = await state.store.transcript(runId, turnId);
  if (!turn && rows.length === 0) throw new Jr2Error("JR2_ERR_RUN_TURN_NOT_FOUND", { runId, turnId });
  const usage = await state.store.usage(runId);
  const record = turn ?? recordFromRows(turnId, rows);
  const prefix = await prefixOf(state, runId, record, rows);
  return {
    ...summaryOf(record, usage),
    prefix,
    entries: rows.filter((r) => r.entry.kind !== "prefix").map(recordOfRow),
  };
}

/** The run exists (live in memory, or in the store). @throws JR2_ERR_RUN_NOT_FOUND */
async function knownRun(state: HostState, runId: string): Promise<void> {
  if (!state.runs.has(runId)) await storedBlob(state, runId);
}

/** A Turn record as listed: its usage summed from the usage rows that name it. */
function summaryOf(turn: TurnRecord, usage: readonly UsageRecord[]): TurnSummary {
  const { turnId, agent, state, startedAt, endedAt, outcome, pick, fault } = turn;
  return {
    turnId,
    agent,
    state,
    startedAt,
    endedAt,
    outcome,
    pick,
    ...(fault ? { fault } : {}),
    usage: sumUsage(usage.filter((u) => u.turnId === turnId)),
  };
}

/**
 * The prefix the Turn's requests went out with: its own newest `prefix` entry, else its
 * conversation's newest one recorded before the Turn's first entry (a continued conversation
 * sends it once), else null.
 */
async function prefixOf(
  state: HostState,
  runId: string,
  turn: TurnRecord,
  rows: readonly TranscriptRow[],
): Promise<TurnTranscript["prefix"]> {
  const own = rows.filter((r) => r.entry.kind === "prefix").at(-1);
  const first = rows[0]?.at ?? turn.startedAt;
  const found = own ?? (await state.store.prefixes(runId, turn.iid)).filter((r) => r.at <= first).at(-1);
  return found?.entry.kind === "prefix"
    ? { system: found.entry.system, toolsJson: found.entry.toolsJson }
    : null;
}

/** A Turn known only by its rows (its record not written): its seat unknown, its times from the rows. */
function recordFromRows(turnId: string, rows: readonly TranscriptRow[]): TurnRecord {
  return {
    turnId,
    agent: "",
    state: "",
    iid: rows[0]?.iid ?? "",
    startedAt: rows[0]?.at ?? "",
    endedAt: null,
    outcome: "running",
    pick: null,
  };
}
