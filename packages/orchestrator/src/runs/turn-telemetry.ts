/**
 * What a registered Turn tells its run's feed from the Harness's stream (the Turn driver's
 * `telemetry`, `recordUsage`, `recordTranscript`): each once by its Submission and stream
 * position — usage (ADR-0255), transcripts (ADR-0257) and, issue 22 §5, the `retry` lines of a
 * model request: the next Turn on a conversation reads the stream from where the last one's
 * Submission was ledgered, so without a key a mid-stream retry was told under it too.
 * @see SPEC §5.6 (the feed never carries an iid)
 */
import type { Logger } from "pino";
import { capEntry, type TranscriptRow } from "../durability/transcript-rows.js";
import type { UsageRecord } from "../durability/usage-totals.js";
import type { Registration } from "../turns/registration-table.js";
import { toolCallLines } from "../turns/tool-call-lines.js";
import { type TurnContext, usageFeedEntry } from "../turns/turn-driver.js";
import type { LiveRun } from "./live-run.js";

/** Where a Turn sits: its invoking state, its Agent, its feed child (`<state>#<agent>`), its log. */
export interface TurnSeat {
  statePath: string;
  agent: string;
  child: string;
  log: Logger;
}

/** What telling needs from the host (turn-registration.ts's deps): the once-by-key recorders. */
export interface TelemetryDeps {
  /** Records a usage record once by its key; false when already recorded (ADR-0255). */
  recordUsage?(run: LiveRun, record: UsageRecord): boolean;
  /** Records a transcript row once by its key; false when already recorded (ADR-0257). */
  recordTranscript?(run: LiveRun, row: TranscriptRow): boolean;
}

/** The feed-telling part of a Turn's context; `current` is its live registration (a reseat moves it). */
export function turnTelemetry(
  deps: TelemetryDeps,
  run: LiveRun,
  seat: TurnSeat,
  current: () => Registration,
): Pick<TurnContext, "telemetry" | "recordUsage" | "recordTranscript"> {
  const { child } = seat;
  return {
    telemetry: (event) => {
      if (event.type === "retry" && event.key !== undefined) {
        // Once per Submission and stream position: a stream read again tells nothing twice.
        if (run.retryKeys.has(event.key)) return;
        run.retryKeys.add(event.key);
        const { key: _key, ...line } = event;
        run.feed.append({ ...line, child } as never);
        return;
      }
      run.feed.append({ ...event, child } as never);
    },
    recordUsage: (read) => {
      // Named with its Submission's Turn, so each Turn's usage sums (ADR-0257).
      const turnId = run.submissionTurns.get(read.submissionId) ?? current().turnId;
      const record = turnId === null ? read : { ...read, turnId };
      // Once per stream position (ADR-0255): a stream read again after a restart adds nothing.
      if (deps.recordUsage && !deps.recordUsage(run, record)) return;
      run.feed.append({ ...usageFeedEntry(record), child } as never);
    },
    recordTranscript: ({ submissionId, position, entry }) => {
      // An ended Submission's last answer may come after the next Turn's admission (ADR-0159).
      const turnId = run.submissionTurns.get(submissionId) ?? current().turnId;
      if (turnId === null) return;
      const at = new Date().toISOString();
      const row = { iid: current().iid, submissionId, position, turnId, at, ...capEntry(entry) };
      // Once per stream position (ADR-0257); a tool call's feed line only with a new row.
      if (!deps.recordTranscript || !deps.recordTranscript(run, row)) return;
      for (const line of toolCallLines(row.entry, seat.agent)) run.feed.append({ ...line, child } as never);
    },
  };
}
