import type { StreamEvent, SubmissionRequest } from "@jr2/wire";
import type { RunOutcome, Seat } from "../engine/pi/engine-pi.js";
import { hooksFor } from "../engine/steer-fallback.js";
import { type ModelEntry, modelEntry, retryPolicy, toPiModel } from "../provider/models.js";
import { forLog } from "../provider/provider-errors.js";
import { sandboxWarnings } from "../tools/sandbox/working-sandbox.js";
import { type KvWaitTally, kvWaitField, newKvWaitTally, waitBegan, waitEnded } from "./kv-wait-tally.js";
import { mcpSnapshotEvent } from "./mcp-snapshot-event.js";
import { buildRequestPhase, seatPhase } from "./seat-phase.js";
import { readSurfacePhase } from "./surface-phase.js";
import { logAt, type SeatSlot, type Settlement, type TurnDeps } from "./turn-deps.js";
import { type TurnState, turnHooks } from "./turn-hooks.js";

export type { SeatSlot, Settlement, TurnDeps } from "./turn-deps.js";

/**
 * One Submission, top-down (§7.2): read surface (surface-phase.ts) → seat, first Submission only
 * (seat-phase.ts) → build request → run loop with the Turn's hooks (turn-hooks.ts) → settle.
 * Intermediate results are tagged unions; the Turn's state is one object passed to the hooks,
 * never hidden. The engine's own concerns live in engine/pi/engine-pi.ts and the files it names.
 * @see SPEC §7.2, §7.5
 */

/**
 * Runs one Submission to its settlement; never throws. `waited` tallies its requests' KV waits
 * (the settlement's `kvWaitMs`); the caller keeps it to settle an abort with it too.
 */
export async function runTurn(
  slot: SeatSlot,
  submissionId: string,
  req: SubmissionRequest,
  deps: TurnDeps,
  emit: (e: StreamEvent) => void,
  signal: AbortSignal,
  waited: KvWaitTally = newKvWaitTally(),
): Promise<Settlement> {
  const settle = settlement(submissionId, waited);
  try {
    const surface = await readSurfacePhase(slot.iid, deps, signal);
    if (surface.kind === "settle") return settle(surface.outcome, surface.error);
    if (signal.aborted) return settle("aborted");
    const seated = await seatPhase(slot, req, surface.menu, deps);
    if (signal.aborted) return settle("aborted");
    if (seated.kind === "failed") return settle("failed", seated.error);
    if (seated.mcpNew && seated.mcp) emit(mcpSnapshotEvent(submissionId, seated.mcp, deps));
    for (const message of sandboxWarnings(deps.sandbox, slot.hasWorkingTools, req.network))
      emit({ type: "warning", submissionId, message });
    const dials = dialsPhase(slot, req, deps);
    if (dials.kind === "failed") return settle("failed", dials.error);
    const state: TurnState = { lastRead: { kind: "known", allowed: surface.allowed } };
    // `{{diff repos.<slot>}}` expanded here (issue 28 §4): the expanded text is what the transcript keeps.
    const prompt =
      req.prompt !== undefined && deps.workspaces
        ? await deps.workspaces.expandPrompt(req.prompt, slot.iid.split("/")[0] ?? "")
        : req.prompt;
    const userText = buildRequestPhase(
      slot,
      prompt === undefined ? req : { ...req, prompt },
      surface.allowed,
    );
    const run: RunInput = { seat: seated.seat, userText, allowed: surface.allowed, state, ...dials };
    const outcome = await runPhase(slot, submissionId, req, { ...run, waited }, deps, emit, signal);
    if (signal.aborted) return settle("aborted");
    // Every settlement commits the Worktree (issue 28 §3, ADR-0219): a fault the Orchestrator
    // decides after a completed one (no pick after the nudges) keeps the Turn's files too.
    const commit = await commitAtSettlement(slot, req, deps);
    const settled = settlePhase(slot, req, dials.modelName, outcome, deps, settle);
    return commit ? { ...settled, commit } : settled;
  } catch (err) {
    return settle("failed", { type: "internal", message: err instanceof Error ? err.message : String(err) });
  }
}

/**
 * Commits the Turn's Repo Slot if it changed, for its settlement (ADR-0219): `{ "<ws>/<slot>": head }`,
 * or undefined when the Turn has no Working tools or no slot, or the commit failed (logged).
 */
export async function commitAtSettlement(
  slot: SeatSlot,
  req: SubmissionRequest,
  deps: Pick<TurnDeps, "workspaces" | "log">,
): Promise<Record<string, string> | undefined> {
  if (!slot.cwd || !slot.hasWorkingTools || !deps.workspaces) return undefined;
  return deps.workspaces
    .commitAt(slot.cwd, { agent: req.agent, state: req.state ?? slot.iid })
    .catch((error: unknown) => {
      deps.log("the Worktree could not be committed at settlement", { iid: slot.iid, error: String(error) });
      return undefined;
    });
}

type Settle = (
  outcome: Settlement["outcome"],
  error?: { type: string; message: string; cause?: string },
  textCall?: boolean,
  textCallWhere?: "reasoning",
) => Settlement;

/** The `submission-settled` event of this Submission. */
function settlement(submissionId: string, waited: KvWaitTally): Settle {
  return (outcome, error, textCall, textCallWhere) => ({
    type: "submission-settled",
    submissionId,
    outcome,
    ...(error ? { error } : {}),
    ...(textCall ? { textCall } : {}),
    ...(textCall && textCallWhere ? { textCallWhere } : {}),
    ...kvWaitField(waited),
  });
}

type DialsPhase =
  | { kind: "ready"; modelName: string; entry: ModelEntry; thinkingLevel: string }
  | { kind: "failed"; error: { type: "model"; cause: "unknown-model"; message: string } };

/**
 * Phase 3a: the model entry and the dials (model, thinking level). A dial changed on a
 * continued conversation is logged: the provider may re-bill the cached prefix.
 */
function dialsPhase(slot: SeatSlot, req: SubmissionRequest, deps: TurnDeps): DialsPhase {
  const modelName = req.model ?? req.definition.model;
  const entry = modelEntry(deps.models, modelName);
  if (!entry)
    return {
      kind: "failed",
      error: {
        type: "model",
        cause: "unknown-model",
        message: `unknown model \`${modelName}\`: the Harness's model table (JR2_MODELS) has no entry of that name`,
      },
    };
  const dials = {
    model: modelName,
    thinkingLevel: req.thinkingLevel ?? req.definition.thinkingLevel ?? "off",
  };
  if (
    slot.lastDials &&
    (slot.lastDials.model !== dials.model || slot.lastDials.thinkingLevel !== dials.thinkingLevel)
  ) {
    deps.log("dial changed on a continued conversation; the provider may re-bill the prefix", {
      iid: slot.iid,
      ...dials,
    });
  }
  slot.lastDials = dials;
  return { kind: "ready", modelName, entry, thinkingLevel: dials.thinkingLevel };
}

interface RunInput {
  seat: Seat;
  userText: string;
  allowed: string[];
  state: TurnState;
  modelName: string;
  entry: ModelEntry;
  thinkingLevel: string;
  /** The Submission's KV-wait total, added to as requests wait. */
  waited?: KvWaitTally;
}

/** Phase 4: the engine's loop over the model, with the Turn's hooks; an abort stops the seat. */
async function runPhase(
  slot: SeatSlot,
  submissionId: string,
  req: SubmissionRequest,
  run: RunInput,
  deps: TurnDeps,
  emit: (e: StreamEvent) => void,
  signal: AbortSignal,
): Promise<RunOutcome> {
  const { seat, modelName, entry } = run;
  const onAbort = () => seat.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  const outcome: RunOutcome = await seat.run({
    userText: run.userText,
    userPart: { part: req.kind === "nudge" ? "nudge" : "prompt", notices: req.notices ?? [] },
    model: toPiModel(modelName, entry),
    entry: modelName,
    policy: retryPolicy(entry, deps.requestTimeoutMs),
    apiKey: entry.apiKey ?? "jr2-no-key",
    thinkingLevel: run.thinkingLevel as never,
    maxSteps: deps.maxSteps,
    allowed: run.allowed,
    // KV scheduling (issue 30): each request waits for the conversation's place in the set.
    kv: deps.kv?.conversation(
      slot.iid,
      entry,
      ({ position, reason }) => {
        if (run.waited) waitBegan(run.waited);
        emit({ type: "queued", submissionId, position, reason });
      },
      (ms) => {
        if (run.waited) waitEnded(run.waited, ms);
      },
    ),
    // pi steers, so its hooks are the Turn's as they are; an engine without steer gets the fallback.
    hooks: hooksFor(
      seat,
      turnHooks(
        slot,
        submissionId,
        {
          turnId: req.turnId,
          model: modelName,
          agent: req.agent,
          ...(req.state ? { state: req.state } : {}),
          ...(entry.refusalBudget ? { refusalBudget: entry.refusalBudget } : {}),
        },
        run.state,
        deps,
        emit,
      ),
    ),
  });
  signal.removeEventListener("abort", onAbort);
  return outcome;
}

/** Phase 5: the engine's outcome as the Submission's settlement; a model-side failure is logged. */
function settlePhase(
  slot: SeatSlot,
  req: SubmissionRequest,
  modelName: string,
  outcome: RunOutcome,
  deps: TurnDeps,
  settle: Settle,
): Settlement {
  if (outcome.kind === "failed") {
    logAt(deps, "warn", "the Submission failed on the model side", {
      iid: slot.iid,
      turnId: req.turnId,
      model: modelName,
      type: outcome.error.type,
      cause: outcome.error.cause,
      detail: forLog(outcome.error.message),
    });
    return settle("failed", outcome.error);
  }
  return outcome.kind === "completed"
    ? settle("completed", undefined, outcome.textCall, outcome.textCallWhere)
    : settle(outcome.kind);
}
