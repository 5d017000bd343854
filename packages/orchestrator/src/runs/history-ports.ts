/**
 * A Turn's ports to its run's byte-exact conversation history (issue 27, ADR-0175, ADR-0176):
 * each `history` part the Harness streams is kept in the live run's memory (what `historyOf`
 * answers) and, when new, stored by the host beside the transcript, so a restored or adopted
 * run pushes it back to a Harness that lost its data dir. A fresh conversation's history is
 * dropped (memory and store) when its Turn ends: it is never admitted again; a continued one's
 * leaves memory with the run, and the store deletes it when the run settles.
 */
import type { HistorySubmission } from "@jr2/wire";
import type { TurnContext } from "../turns/turn-driver.js";
import type { TurnStart } from "../xstate/run-binding.js";
import type { LiveRun } from "./live-run.js";

/** What the host offers to store histories; absent: kept in memory only. */
export interface HistoryDeps {
  /** Stores a part new to the run's memory (batched, on its own). */
  recordHistory?(run: LiveRun, iid: string, part: HistorySubmission): void;
  /** Deletes the stored history of `iid` (after its parts queued before). */
  dropHistory?(run: LiveRun, iid: string): void;
}

/** The history ports of `turn` of `run` (see the file's header). */
export function historyPorts(
  deps: HistoryDeps,
  run: LiveRun,
  turn: TurnStart,
): Pick<TurnContext, "recordHistory" | "historyOf" | "dropHistory"> {
  return {
    // Any conversation may get a kept admission (a nudge, a wake), a fresh one's too.
    recordHistory: (iid, part) => {
      if (run.histories.record(iid, part)) deps.recordHistory?.(run, iid, part);
    },
    historyOf: (iid) => run.histories.historyOf(iid),
    ...(turn.input.continuation
      ? {}
      : {
          dropHistory: (iid: string) => {
            run.histories.drop(iid);
            deps.dropHistory?.(run, iid);
          },
        }),
  };
}
