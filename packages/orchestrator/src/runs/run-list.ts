/**
 * `GET /runs` (ADR-0062): the store's runs by index, filtered by status, workflow and outcome,
 * newest first — every match as an array (the answer before paging), or one page with a
 * cursor. A run in memory answers as memory has it now (its row may lag by one save); a damaged
 * row as the faulted run it is served as.
 * @see SPEC §4.1, §8
 */
import { Jr2Error, type RunListQuery, type RunPage, type RunSummary } from "@jr2/wire";
import {
  matchesFilter,
  type RunListFilter,
  type StoredRunSummary,
  summaryOfBlob,
} from "../durability/store/run-store.js";
import { sumUsage } from "../durability/usage-totals.js";
import type { HostState } from "./host-state.js";
import { runSummaryOf } from "./run-views.js";

/** The filter of a query (paging aside). */
function filterOf(query: RunListQuery): RunListFilter {
  return {
    ...(query.status === undefined ? {} : { status: query.status }),
    ...(query.workflow === undefined ? {} : { workflow: query.workflow }),
    ...(query.outcome === undefined ? {} : { outcome: query.outcome }),
  };
}

/** A listed row as it is served now: from memory when live, as its stand-in when damaged. */
function servedAs(state: HostState, row: StoredRunSummary): RunSummary {
  const run = state.runs.get(row.runId);
  if (run) return runSummaryOf(run);
  const damaged = state.damaged.get(row.runId);
  return damaged ? summaryOfBlob(damaged) : { ...row };
}

/** Every run matching `query`'s filter, newest first (the unpaged answer). */
export async function listRuns(state: HostState, query: RunListQuery = {}): Promise<RunSummary[]> {
  const filter = filterOf(query);
  const listed = await state.store.list(filter);
  const summaries = new Map<string, RunSummary>(listed.map((s) => [s.runId, servedAs(state, s)]));
  // Memory and the stand-ins may match where the row does not (or no longer).
  const current = [
    ...[...state.damaged.values()].map(summaryOfBlob),
    ...[...state.runs.values()].map(runSummaryOf),
  ];
  for (const s of current) summaries.set(s.runId, s);
  const listedNow = [...summaries.values()]
    .filter((s) => matchesFilter(s, filter))
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  return Promise.all(listedNow.map((s) => withDriftedState(state, s)));
}

/**
 * A drifted run's item with `value`, the state its saved snapshot is in (issue 22: `jr2 runs`
 * showed a blank state): read from its blob — drifted runs are few, and their row has no state
 * column. Any other item as it is.
 */
async function withDriftedState(state: HostState, summary: RunSummary): Promise<RunSummary> {
  if (summary.status !== "drifted" || summary.value !== undefined || state.damaged.has(summary.runId))
    return summary;
  const blob = await state.store.load(summary.runId).catch(() => undefined);
  const value = (blob?.snapshot as { value?: unknown } | null | undefined)?.value;
  return value === undefined ? summary : { ...summary, value };
}

/**
 * One page of `query` (`limit`, default 50; `cursor` from the previous page). Paged by the
 * store's rows: a run whose row does not match yet (its save in flight) is on the page it
 * lands on once saved. @throws JR2_ERR_REQUEST_INVALID (a cursor not from a page)
 */
export async function pageRuns(state: HostState, query: RunListQuery): Promise<RunPage> {
  const limit = query.limit ?? 50;
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const filter = filterOf(query);
  const rows = await state.store.list({ ...filter, limit: limit + 1, ...(after ? { after } : {}) });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const runs = page.map((row) => servedAs(state, row)).filter((s) => matchesFilter(s, filter));
  return {
    runs: await Promise.all(
      runs.map(async (summary) => withDriftedState(state, await withUsage(state, summary))),
    ),
    nextCursor: rows.length > limit && last ? encodeCursor(last) : null,
  };
}

/**
 * A page item with its token totals and its state now, so a list needs no call per run: a live
 * run's from memory, else its usage rows summed and its final state.
 */
async function withUsage(state: HostState, summary: RunSummary): Promise<RunSummary> {
  const live = state.runs.get(summary.runId);
  if (live)
    return {
      ...summary,
      usage: sumUsage(live.usage.values()),
      value: (live.actor.getSnapshot() as { value?: unknown }).value,
    };
  if (state.damaged.has(summary.runId)) return summary;
  const rows = await state.store.usage(summary.runId).catch(() => undefined);
  const value = summary.finalState === undefined ? {} : { value: summary.finalState };
  return rows ? { ...summary, usage: sumUsage(rows), ...value } : { ...summary, ...value };
}

/** The cursor after `row`: base64url of `[updatedAt, runId]`. */
function encodeCursor(row: StoredRunSummary): string {
  return Buffer.from(JSON.stringify([row.updatedAt, row.runId])).toString("base64url");
}

function decodeCursor(cursor: string): { updatedAt: string; runId: string } {
  try {
    const [updatedAt, runId] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (typeof updatedAt === "string" && typeof runId === "string") return { updatedAt, runId };
  } catch {
    // answered below
  }
  throw new Jr2Error("JR2_ERR_REQUEST_INVALID", {
    detail: `cursor \`${cursor}\` is not a page's nextCursor; start without one`,
  });
}
