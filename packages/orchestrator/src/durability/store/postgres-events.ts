/**
 * The PostgreSQL store's event log (ADR-0256, ADR-0280): the `run_events` table behind
 * `appendEvents`, `events`, `lastEventSeq` and `pruneEvents`, and the insert a save runs in its
 * own transaction. Each event is stored once by (run, seq) with its original `seq` and `at`;
 * a transaction that inserts events also runs `pg_notify('jr2_events', '<runId> <maxSeq>')`,
 * delivered at commit: the notice carries only `(runId, seq)`, never event data.
 * @see SPEC §8
 */
import type { RunFeedEvent } from "@jr2/wire";
import { insertMany, type Sql } from "./postgres-connection.js";

/** The channel every store's notices go on. */
export const EVENTS_CHANNEL = "jr2_events";

/** Settled runs (neither running nor drifted) last updated before `$1`: what retention deletes. */
export const SETTLED_BEFORE =
  "SELECT run_id FROM runs WHERE status NOT IN ('running', 'drifted') AND updated_at < $1";

/**
 * Inserts `events` of `runId`, each once by seq, inside the caller's transaction, and queues
 * the notice of the highest seq (sent at commit).
 */
export async function insertEvents(sql: Sql, runId: string, events: readonly RunFeedEvent[]): Promise<void> {
  if (events.length === 0) return;
  await insertMany(
    sql,
    "INSERT INTO run_events (run_id, seq, at, type, event)",
    5,
    events.map((e) => [runId, e.seq, e.at, e.type, JSON.stringify(e)]),
  );
  const maxSeq = Math.max(...events.map((e) => e.seq));
  await sql.query("SELECT pg_notify($1, $2)", [EVENTS_CHANNEL, `${runId} ${maxSeq}`]);
}

/** Reads a notice's payload: `<runId> <seq>` (a run id may hold spaces: the seq is the last word). */
export function parseNotice(payload: string | undefined): { runId: string; seq: number } | undefined {
  if (!payload) return undefined;
  const space = payload.lastIndexOf(" ");
  const seq = Number(payload.slice(space + 1));
  if (space <= 0 || !Number.isInteger(seq)) return undefined;
  return { runId: payload.slice(0, space), seq };
}

/** One page of `runId`'s log: up to `limit` events with `seq >= from`, in seq order. */
export async function pageEvents(
  sql: Sql,
  runId: string,
  from: number,
  limit: number,
): Promise<RunFeedEvent[]> {
  const { rows } = await sql.query<{ event: string }>(
    "SELECT event FROM run_events WHERE run_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3",
    [runId, from, Math.max(0, limit)],
  );
  return rows.map((r) => JSON.parse(r.event) as RunFeedEvent);
}

/** The highest stored seq of `runId`'s log; undefined when it has none. */
export async function lastSeq(sql: Sql, runId: string): Promise<number | undefined> {
  const { rows } = await sql.query<{ seq: number | null }>(
    "SELECT MAX(seq) AS seq FROM run_events WHERE run_id = $1",
    [runId],
  );
  return rows[0]?.seq ?? undefined;
}

/** The highest stored seq of each of `runIds` that has events. */
export async function lastSeqs(sql: Sql, runIds: readonly string[]): Promise<Map<string, number>> {
  if (runIds.length === 0) return new Map();
  const { rows } = await sql.query<{ run_id: string; seq: number }>(
    "SELECT run_id, MAX(seq) AS seq FROM run_events WHERE run_id = ANY($1) GROUP BY run_id",
    [runIds],
  );
  return new Map(rows.map((r) => [r.run_id, r.seq]));
}

/** Deletes the logs of settled runs updated before `before` (ISO-8601); returns the rows deleted. */
export async function pruneEventRows(sql: Sql, before: string): Promise<number> {
  const result = await sql.query(`DELETE FROM run_events WHERE run_id IN (${SETTLED_BEFORE})`, [before]);
  return result.rowCount ?? 0;
}
