/**
 * Retrying a faulted Turn in place, decided (issue 13 item 3, ADR-0271): whether a stored run
 * has a fault to retry, which kept version is the last before it, and the blob that sets the
 * run back there — pure functions over stored blobs. The effects are `retry-run.ts`'s.
 * @see SPEC §5.3, §5.6, §8; ADR-0062, ADR-0270
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { RunFaultRecord } from "@jr2/wire";
import type { RunBlob } from "../durability/store/run-store.js";
import { snapshotAgents } from "./snapshot-walk.js";

/**
 * Why `blob` has nothing to retry, or the fault to retry: the newest Turn fault of a run that
 * faulted (unrouted) or reached a `failed` outcome through a routed one.
 */
export function faultToRetry(
  blob: RunBlob,
): { fault: RunFaultRecord } | { machineFault: string } | { why: string } {
  if (blob.status === "running") return { why: "it is running" };
  if (blob.status === "drifted") return { why: "it is drifted; resume it (`jr2 resume --accept-drift`)" };
  if (blob.status === "cancelled") return { why: "it was cancelled" };
  if (blob.status === "done" && blob.outcome !== "failed") return { why: notFailed(blob) };
  // The newest Turn fault must be what ended the run: unrouted for `faulted`, routed for `failed`.
  const fault = blob.faults?.at(-1);
  if (!fault || fault.turnId === null || fault.routed !== (blob.status === "done")) {
    if (blob.status === "done")
      return { why: `its failed outcome was not reached through a Turn fault; ${startAgain(blob)}` };
    // Faulted by the Machine itself (an action or mapper that threw, a bad Turn input): ADR-0272.
    return { machineFault: blob.fault?.reason ?? "no fault recorded" };
  }
  return { fault };
}

/**
 * The next step for a run that failed with no Turn fault to set back (a Repo Slot refused at
 * start, a service the workflow invokes rejected): its input is what to fix, so the step is a new
 * run with it, the exact command with the run's stored input to edit (newcomer review, session
 * 10). Not a fork: a fork's `--context` patches the saved context, and an actor already invoked
 * (the workspace's attach) keeps the input it started with.
 */
function startAgain(blob: RunBlob): string {
  const input = blob.input === undefined || blob.input === null ? "{}" : JSON.stringify(blob.input);
  // Single-quoted for a POSIX shell: a `'` inside closes, escapes and reopens the quote.
  const quoted = `'${input.replaceAll("'", `'\\''`)}'`;
  return (
    `\`jr2 show ${blob.runId}\` says why it failed; fix the input and start a new run: ` +
    `\`jr2 run ${blob.workflow} --input ${quoted} --follow\``
  );
}

/**
 * Why a settled run that did not fail has nothing to retry. A Turn fault routed to a final state
 * without `meta.outcome` ended the run `succeeded` (the load warned `JR2_WARN_OUTCOME_UNDECLARED`):
 * say so, and how to make such a run retryable (issue 22 §5).
 */
function notFailed(blob: RunBlob): string {
  const routed = blob.faults?.at(-1)?.routed === true;
  const final = JSON.stringify((blob.snapshot as { value?: unknown } | null)?.value ?? null);
  if (blob.outcome === "succeeded" && routed)
    return (
      `it succeeded: its Turn fault was routed to final state ${final}, which declares no \`meta.outcome\` ` +
      "(JR2_WARN_OUTCOME_UNDECLARED at load: a final state without one counts as succeeded); declare " +
      '`meta: { outcome: "failed" }` on it so a run that ends there can be retried'
    );
  return `it ${blob.outcome ?? "succeeded"}`;
}

/** Whether a kept version's blob is the run before the fault: running, with the faulted Turn live. */
export function holdsTurn(blob: RunBlob, turnId: string): boolean {
  return blob.status === "running" && snapshotAgents(blob.snapshot).some((a) => a.input.turnId === turnId);
}

/**
 * Gives every live Turn of `snapshot` (rewritten in place) a new conversation, as a retry does
 * for one: a new turnId, a continued conversation at its next epoch past both `epochs` (updated)
 * and the iid it had, a fresh one new random hex; each old iid's ledger entry dropped.
 * @returns the Turns (`<state path>#<agent>`)
 */
export function renewTurns(
  snapshot: unknown,
  runId: string,
  epochs: Record<string, number>,
  ledger: Record<string, unknown>,
): string[] {
  const renewed: string[] = [];
  for (const turn of snapshotAgents(snapshot)) {
    const { input } = turn;
    const oldIid = input.iid;
    const address = [runId, turn.path, input.agentName].filter((p) => p.length > 0).join("/");
    if (input.continuation) {
      const had = oldIid === address ? 0 : Number(oldIid.slice(address.length + 1)) || 0;
      epochs[address] = Math.max(epochs[address] ?? 0, had + 1);
      input.iid = `${address}/${epochs[address]}`;
    } else input.iid = `${address}/${randomBytes(4).toString("hex")}`;
    input.turnId = randomUUID();
    input.fresh = true;
    delete ledger[oldIid];
    renewed.push(`${turn.statePath}#${input.agentName}`);
  }
  return renewed;
}

/**
 * The blob that retries: `before` (the last version before the fault) running again under the
 * same runId, with the faulted Turn on a new conversation — a new turnId, its ledger entry
 * dropped, a continued conversation at its next epoch (epochs never go back: each is the newest
 * of `before`'s and `now`'s, the faulted one past both) — and `now`'s fault records and usage.
 * @returns the blob, the Turn (`<state path>#<agent>`) and its new turnId
 */
export function retriedBlob(
  before: RunBlob,
  now: RunBlob,
  turnId: string,
  at: string,
): { blob: RunBlob; child: string; turnId: string } {
  const snapshot = structuredClone(before.snapshot);
  const turn = snapshotAgents(snapshot).find((a) => a.input.turnId === turnId);
  if (!turn) throw new Error(`the version holds no Turn ${turnId}`);
  const epochs: Record<string, number> = { ...before.epochs };
  for (const [address, epoch] of Object.entries(now.epochs))
    epochs[address] = Math.max(epochs[address] ?? 0, epoch);
  const { input } = turn;
  const oldIid = input.iid;
  const address = [before.runId, turn.path, input.agentName].filter((p) => p.length > 0).join("/");
  if (input.continuation) {
    const faulted = oldIid === address ? 0 : Number(oldIid.slice(address.length + 1)) || 0;
    epochs[address] = Math.max(epochs[address] ?? 0, faulted + 1);
    input.iid = `${address}/${epochs[address]}`;
  } else input.iid = `${address}/${randomBytes(4).toString("hex")}`;
  input.turnId = randomUUID();
  input.fresh = true;
  const ledger = { ...before.ledger };
  delete ledger[oldIid];
  const { fault: _fault, outcome: _outcome, ...rest } = before;
  return {
    blob: {
      ...rest,
      status: "running",
      snapshot,
      ledger,
      epochs,
      usage: now.usage,
      ...(now.faults ? { faults: now.faults } : {}),
      updatedAt: at,
    },
    child: `${turn.statePath}#${input.agentName}`,
    turnId: input.turnId,
  };
}
