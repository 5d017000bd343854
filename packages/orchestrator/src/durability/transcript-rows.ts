/**
 * Turn transcripts as the store records them (ADR-0257): one row per `transcript` stream
 * event, keyed like usage rows by (iid, submissionId, stream position) so a stream read again
 * after a restore adds nothing; one Turn record per Turn (its seat, times, outcome, pick and
 * fault), written again as it changes. Each text field over TRANSCRIPT_FIELD_CAP_BYTES (UTF-8)
 * is cut there and its full byte count kept in `capped`.
 * @see SPEC §8; issue 11 item 3
 */
import {
  TRANSCRIPT_FIELD_CAP_BYTES,
  type TranscriptEntry,
  type TranscriptRecord,
  type TurnOutcome,
} from "@jr2/wire";

/** One recorded transcript entry of a run: its key, its Turn, when it was recorded, the capped entry. */
export interface TranscriptRow {
  iid: string;
  submissionId: string;
  /** The event's position in its conversation's stream (usage-totals.ts `streamPosition`). */
  position: string;
  /** The Turn it belongs to (the admission's turnId). */
  turnId: string;
  /** ISO-8601, when the Orchestrator recorded it. */
  at: string;
  entry: TranscriptEntry;
  /** Field path (`text`, `toolCalls.0.rawArguments`) → full UTF-8 byte count, for each cut field. */
  capped?: Record<string, number>;
}

/** One Turn of a run as stored: what `GET /runs/:runId/turns` lists (usage is summed from rows). */
export interface TurnRecord {
  turnId: string;
  agent: string;
  /** The invoking state's path. */
  state: string;
  /** The conversation it reads now (a reseat moves it, §5.3). */
  iid: string;
  /** ISO-8601. */
  startedAt: string;
  endedAt: string | null;
  outcome: TurnOutcome;
  pick: { name: string; arguments: unknown } | null;
  fault?: { reason: string; cause?: string; detail?: string };
}

/**
 * Whether writing `next` over the stored record of the same Turn would lose its pick: a Turn
 * once `picked` stays so. Its picked record is written in the pick's own transaction; a record
 * queued before (`left`, no pick, from its state's exit) may land after it and must not undo it.
 */
export function losesPick(stored: TurnRecord | undefined, next: TurnRecord): boolean {
  return stored?.outcome === "picked" && next.outcome !== "picked";
}

/** The SQL guard of {@link losesPick} on a `turns` upsert (`turns.record` the stored row, `excluded` the new). */
export const KEEP_PICKED_TURN = (outcomeOf: (record: string) => string): string =>
  `WHERE ${outcomeOf("turns.record")} IS DISTINCT FROM 'picked' OR ${outcomeOf("excluded.record")} = 'picked'`;

/**
 * The Turn records a save writes, in order: `turns` (those waiting for it, ADR-0296), then each
 * pick's Turn as the pick leaves it — so a Turn's `left` and its pick in one save end `picked`.
 */
export function turnRecordsOfSave(
  picks: readonly { turn?: TurnRecord }[],
  turns: readonly TurnRecord[] = [],
): TurnRecord[] {
  return [...turns, ...picks.flatMap((p) => (p.turn ? [p.turn] : []))];
}

/** The identity of a transcript row: `[iid, submissionId, position]` as JSON. */
export function transcriptKey(row: Pick<TranscriptRow, "iid" | "submissionId" | "position">): string {
  return JSON.stringify([row.iid, row.submissionId, row.position]);
}

/** A stored row as the wire's {@link TranscriptRecord}. */
export function recordOfRow(row: TranscriptRow): TranscriptRecord {
  return {
    at: row.at,
    submissionId: row.submissionId,
    entry: row.entry,
    ...(row.capped ? { capped: row.capped } : {}),
  };
}

/**
 * `entry` with each string, at any depth (its text, a tool call's arguments, a notice's
 * fields), cut at `cap` UTF-8 bytes (never inside a character), and the full byte count of
 * each cut field by its path (`text`, `toolCalls.0.rawArguments`, `notices.0.pick`); `capped`
 * is absent when nothing was cut. The Harness writes every string of an entry.
 */
export function capEntry(
  entry: TranscriptEntry,
  cap = TRANSCRIPT_FIELD_CAP_BYTES,
): { entry: TranscriptEntry; capped?: Record<string, number> } {
  const capped: Record<string, number> = {};
  const walk = (value: unknown, path: string): unknown => {
    const at = (key: string | number) => (path === "" ? String(key) : `${path}.${key}`);
    if (typeof value === "string") {
      const bytes = Buffer.byteLength(value, "utf8");
      if (bytes <= cap) return value;
      capped[path] = bytes;
      return cutUtf8(value, cap);
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, at(i)));
    if (value !== null && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, at(k))]));
    return value;
  };
  const result = walk(entry, "") as TranscriptEntry;
  return Object.keys(capped).length === 0 ? { entry: result } : { entry: result, capped };
}

/** The longest prefix of `text` of at most `max` UTF-8 bytes that ends on a character boundary. */
function cutUtf8(text: string, max: number): string {
  const bytes = Buffer.from(text, "utf8");
  let end = max;
  // A continuation byte (10xxxxxx) would split a character: back up to its lead byte.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8");
}
