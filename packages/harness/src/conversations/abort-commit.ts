import type { StreamEvent, SubmissionRequest } from "@jr2/wire";
import { type KvWaitTally, kvWaitField } from "../turn/kv-wait-tally.js";
import { commitAtSettlement } from "../turn/turn.js";
import type { SeatSlot, TurnDeps } from "../turn/turn-deps.js";

/**
 * How long an abort waits for the aborted Submission's run to stop before it commits the
 * Worktree anyway, ms. A tool the abort did not stop may still write afterwards: that work is
 * in the next commit, or in a rescue ref (issue 28 §3).
 */
export const ABORT_COMMIT_WAIT_MS = 2_000;

/** Whether an abort of a Submission on `slot` commits before it settles (ADR-0219). */
export function commitsOnAbort(slot: SeatSlot, deps: Pick<TurnDeps, "workspaces">): boolean {
  return slot.cwd !== undefined && slot.hasWorkingTools && deps.workspaces !== undefined;
}

/**
 * The commit an aborted Submission's settlement carries (issue 28 §3, ADR-0219): waits for its
 * run to stop (at most {@link ABORT_COMMIT_WAIT_MS}: the abort signal ends the model request and
 * the tools), then commits the Turn's Repo Slot if it changed. Never throws; undefined when there
 * is nothing to commit or the commit failed (logged).
 */
export async function commitAfterAbort(
  running: Promise<void> | undefined,
  slot: SeatSlot,
  req: SubmissionRequest,
  deps: Pick<TurnDeps, "workspaces" | "log">,
): Promise<Record<string, string> | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ABORT_COMMIT_WAIT_MS);
    timer.unref();
  });
  await Promise.race([running?.catch(() => undefined), waited]);
  clearTimeout(timer);
  return commitAtSettlement(slot, req, deps);
}

type Settlement = Extract<StreamEvent, { type: "submission-settled" }>;

/** What {@link abortOpen} needs of a conversation and its Submissions. */
interface AbortableConversation {
  slot: SeatSlot;
  queue: {
    id: string;
    req: SubmissionRequest;
    settled: boolean;
    closing?: boolean;
    abort: AbortController;
    kvWait: KvWaitTally;
  }[];
  runningId: string | undefined;
  running: Promise<void> | undefined;
  closing?: Promise<void>;
}

/**
 * Aborts a conversation's running and queued Submissions and settles each `aborted`, in
 * admission order (its KV wait so far included, ADR-0432). Without a Repo Slot they settle at
 * once; with one, the running Submission's settlement carries the Worktree's commit
 * ({@link commitAfterAbort}), so until it is made nothing else runs (`conv.closing`) and
 * `after` runs once all are settled. Returns whether anything was open.
 */
export function abortOpen<C extends AbortableConversation>(
  conv: C,
  deps: Pick<TurnDeps, "workspaces" | "log">,
  settle: (conv: C, sub: C["queue"][number], s: Settlement) => void,
  after: () => void,
): boolean {
  const open = conv.queue.filter((s) => !s.settled && !s.closing);
  for (const sub of open) sub.abort.abort();
  const settleAll = (commit?: Record<string, string>) => {
    for (const sub of open) {
      const aborted = { type: "submission-settled", submissionId: sub.id, outcome: "aborted" } as const;
      const withCommit = sub.id === conv.runningId && commit ? { commit } : {};
      settle(conv, sub, { ...aborted, ...kvWaitField(sub.kvWait), ...withCommit });
    }
  };
  const running = open.find((s) => s.id === conv.runningId);
  if (!running || !commitsOnAbort(conv.slot, deps)) {
    settleAll();
    return open.length > 0;
  }
  for (const sub of open) sub.closing = true;
  conv.closing = commitAfterAbort(conv.running, conv.slot, running.req, deps).then((commit) => {
    conv.closing = undefined;
    settleAll(commit);
    after();
  });
  return true;
}
