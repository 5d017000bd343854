import type { PickAnswer, StreamEvent, SubmissionRequest, TolerantPickAnswer } from "@jr2/wire";
import {
  createSeat,
  type NotRunReason,
  type RunHooks,
  type RunOutcome,
  type Seat,
} from "../engine/pi/engine-pi.js";
import type { OrchestratorClient } from "../orchestrator/orchestrator-client.js";
import { systemPrompt, turnPart, userMessageText } from "../presenters/briefing.js";
import * as menu from "../presenters/menu.js";
import type { EndpointLimiter } from "../provider/limiter.js";
import { type ModelTable, modelEntry, retryPolicy, toPiModel } from "../provider/models.js";
import { withoutServerText } from "../provider/provider-errors.js";
import type { Redactor } from "../tools/secret-redaction.js";
import { createWorkingDirectory } from "../tools/working-directory.js";
import { createWorkingTools } from "../tools/working-tools.js";
import { decideBoundary, type LastRead } from "./between-steps.js";
import { refusedPickAnswer } from "./refused-pick.js";

/**
 * One Submission, top-down (§7.2): read surface → seat (first Submission only) → build request →
 * run loop → settle. Intermediate results are tagged unions; the Turn's state is one object
 * passed to the hooks, never hidden. Longer than ~300 lines on purpose: STYLE.md asks the
 * Harness's Turn to read top-down in one file of small named phases (pi's agent-loop.ts); the
 * engine's own concerns live in engine-pi.ts and the files it names.
 * @see SPEC §7.2, §7.5
 */

/** What a Submission's run needs from the Harness. */
export interface TurnDeps {
  orchestrator: OrchestratorClient;
  models: ModelTable;
  limiter: EndpointLimiter;
  /** Surface read budget before the model (ms, §7.2 step 1: 90 000). */
  surfaceBudgetMs: number;
  /** The bounded boundary read (ms, §7.5). */
  boundaryReadMs: number;
  maxSteps: number;
  /** Per model request (ms), unless the model entry's `retry.requestTimeoutMs` says otherwise. */
  requestTimeoutMs: number;
  /** The Harness's secret values: kept out of Working tools' environment and results (ADR-0158). */
  secrets: Redactor;
  log: (msg: string, fields?: Record<string, unknown>) => void;
  /**
   * Model-side trouble (provider errors, retries, invented tools, not-run calls, text calls) at
   * warn, the replay-lint's repairs at error; each line names iid, turnId and model, never prompt
   * or argument text. Absent: `log` with a `level` field.
   */
  warn?: (msg: string, fields?: Record<string, unknown>) => void;
  error?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** The conversation-level state a Submission reads and (once) writes. */
export interface SeatSlot {
  iid: string;
  seat: Seat | undefined;
  menuOrder: string[];
  hasWorkingTools: boolean;
  /** The seat's working directory (Working tools only). */
  cwd: string | undefined;
  lastDials: { model: string; thinkingLevel: string } | undefined;
}

/** How a Submission ended. */
export type Settlement = Extract<StreamEvent, { type: "submission-settled" }>;

type SurfacePhase =
  | { kind: "ready"; allowed: string[]; menu: import("@jr2/wire").Tool[] }
  | { kind: "settle"; outcome: "aborted" | "failed"; error?: { type: string; message: string } };

/** Runs one Submission to its settlement; never throws. */
export async function runTurn(
  slot: SeatSlot,
  submissionId: string,
  req: SubmissionRequest,
  deps: TurnDeps,
  emit: (e: StreamEvent) => void,
  signal: AbortSignal,
): Promise<Settlement> {
  const settle = (
    outcome: Settlement["outcome"],
    error?: { type: string; message: string; cause?: string },
    textCall?: boolean,
  ): Settlement => ({
    type: "submission-settled",
    submissionId,
    outcome,
    ...(error ? { error } : {}),
    ...(textCall ? { textCall } : {}),
  });
  try {
    const surface = await readSurfacePhase(slot.iid, deps, signal);
    if (surface.kind === "settle") return settle(surface.outcome, surface.error);
    if (signal.aborted) return settle("aborted");
    const seated = await seatPhase(slot, req, surface.menu, deps);
    if (signal.aborted) return settle("aborted");
    if (seated.kind === "failed") return settle("failed", seated.error);
    const seat = seated.seat;
    const modelName = req.model ?? req.definition.model;
    const entry = modelEntry(deps.models, modelName);
    if (!entry)
      return settle("failed", {
        type: "model",
        cause: "unknown-model",
        message: `unknown model \`${modelName}\`: the Harness's model table (JR2_MODELS) has no entry of that name`,
      });
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
    const state: TurnState = { lastRead: { kind: "known", allowed: surface.allowed } };
    const userText = buildRequestPhase(slot, req, surface.allowed);
    const onAbort = () => seat.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    const outcome: RunOutcome = await seat.run({
      userText,
      userPart: { part: req.kind === "nudge" ? "nudge" : "prompt", notices: req.notices ?? [] },
      model: toPiModel(modelName, entry),
      entry: modelName,
      policy: retryPolicy(entry, deps.requestTimeoutMs),
      apiKey: entry.apiKey ?? "jr2-no-key",
      thinkingLevel: dials.thinkingLevel as never,
      maxSteps: deps.maxSteps,
      allowed: surface.allowed,
      hooks: turnHooks(slot, submissionId, { turnId: req.turnId, model: modelName }, state, deps, emit),
    });
    signal.removeEventListener("abort", onAbort);
    if (signal.aborted) return settle("aborted");
    if (outcome.kind === "failed") {
      logAt(deps, "warn", "the Submission failed on the model side", {
        iid: slot.iid,
        turnId: req.turnId,
        model: modelName,
        type: outcome.error.type,
        cause: outcome.error.cause,
      });
      return settle("failed", outcome.error);
    }
    return outcome.kind === "completed"
      ? settle("completed", undefined, outcome.textCall)
      : settle(outcome.kind);
  } catch (err) {
    return settle("failed", { type: "internal", message: err instanceof Error ? err.message : String(err) });
  }
}

/** Phase 1: the surface, before touching the model. 404 → the Turn is over → aborted. */
async function readSurfacePhase(iid: string, deps: TurnDeps, signal: AbortSignal): Promise<SurfacePhase> {
  const r = await deps.orchestrator.readSurface(iid, { budgetMs: deps.surfaceBudgetMs, signal });
  if (r.kind === "gone") return { kind: "settle", outcome: "aborted" };
  if (r.kind === "failed") {
    return signal.aborted
      ? { kind: "settle", outcome: "aborted" }
      : { kind: "settle", outcome: "failed", error: { type: "surface", message: r.message } };
  }
  return { kind: "ready", allowed: r.surface.allowed, menu: r.surface.menu };
}

type SeatPhase = { kind: "seated"; seat: Seat } | { kind: "failed"; error: { type: "cwd"; message: string } };

/**
 * Phase 2: the first Submission builds the seat from the FIRST surface; later ones reuse it.
 * A working directory that cannot be created fails the Submission (`{ type: "cwd" }`) and
 * seats nothing, so a later Submission tries again.
 */
async function seatPhase(
  slot: SeatSlot,
  req: SubmissionRequest,
  menuItems: import("@jr2/wire").Tool[],
  deps: TurnDeps,
): Promise<SeatPhase> {
  if (slot.seat) return { kind: "seated", seat: slot.seat };
  const cwd = req.definition.workspace === "none" ? undefined : req.cwd;
  // The Harness creates a Turn's working directory on first admission (§5.2).
  if (cwd !== undefined) {
    const created = await createWorkingDirectory(cwd);
    if (created.kind === "failed")
      return { kind: "failed", error: { type: "cwd", message: created.message } };
  }
  const working =
    cwd === undefined ? [] : await createWorkingTools(req.definition.workspace, cwd, deps.secrets);
  const entry = modelEntry(deps.models, req.model ?? req.definition.model);
  slot.seat = createSeat({
    systemPrompt: systemPrompt(req.definition.instructions),
    workingTools: working,
    menu: menuItems,
    cwd,
    limiter: deps.limiter,
    temperature: entry?.temperature,
  });
  slot.menuOrder = menuItems.map((t) => t.name);
  slot.hasWorkingTools = working.length > 0;
  slot.cwd = cwd;
  return { kind: "seated", seat: slot.seat };
}

/** Phase 3: the user message — prompt (or nudge), then the Turn part. */
function buildRequestPhase(slot: SeatSlot, req: SubmissionRequest, allowed: string[]): string {
  const part = turnPart({
    cwd: slot.hasWorkingTools ? req.cwd : undefined,
    notices: req.notices ?? [],
    allowed,
    menuOrder: slot.menuOrder,
  });
  return userMessageText(req.kind, req.prompt, part);
}

/** What the model last read (§7.5). */
interface TurnState {
  lastRead: LastRead;
}

const lastAllowed = (s: TurnState) => (s.lastRead.kind === "known" ? s.lastRead.allowed : undefined);

/** Wire form of a tolerant answer, for observers on the stream. */
function wireAnswer(a: TolerantPickAnswer): PickAnswer {
  return {
    delivered: a.delivered,
    turnComplete: a.turnComplete,
    allowed: a.allowed ?? [],
    ...(a.moved !== undefined ? { moved: a.moved } : {}),
    ...(a.refusal ? { refusal: a.refusal } : {}),
    ...(a.issues ? { issues: a.issues } : {}),
  };
}

/** Phase 4's hooks: pick delivery and receipts, boundary restatements, observers. */
function turnHooks(
  slot: SeatSlot,
  submissionId: string,
  /** The Submission's turnId: sent with each pick, so a re-send finds its own Turn's answer (ADR-0252). */
  who: { turnId: string | undefined; model: string },
  state: TurnState,
  deps: TurnDeps,
  emit: (e: StreamEvent) => void,
): RunHooks {
  const order = slot.menuOrder;
  const turnId = who.turnId;
  const where = { iid: slot.iid, turnId, model: who.model };
  let picks = 0;
  return {
    async menuCall(call) {
      // The idempotency key (§4.3): the model's tool-call id made unique within the Submission —
      // providers that number ids per answer ("call_0") reuse them across steps. Re-sends of this
      // pick (inside postPick) keep the key; the model's id stays readable in it.
      const key = `${submissionId}/${++picks}/${call.toolCallId}`.slice(0, 512);
      const body = { ...call, toolCallId: key };
      const r = await deps.orchestrator.postPick(slot.iid, turnId ? { ...body, turnId } : body);
      /** The stream's record of this pick; `null`: no answer reached the Harness. */
      const emitPick = (answer: ReturnType<typeof wireAnswer> | null) =>
        emit({ type: "pick", submissionId, name: call.name, toolCallId: call.toolCallId, answer });
      if (r.kind === "gone") {
        emitPick(null);
        return { text: menu.TURN_GONE_RECEIPT, turnOver: true };
      }
      if (r.kind === "failed") {
        emitPick(null);
        state.lastRead = { kind: "unknown", ownPick: false };
        return { text: menu.pickInTransitReceipt(call.name), turnOver: false };
      }
      if (r.kind === "refused") {
        // The Orchestrator read it and said no: nothing moved, what the model last read stands.
        const a = refusedPickAnswer(call.arguments, r, lastAllowed(state));
        emitPick(wireAnswer(a));
        return { text: menu.receipt(call.name, a, order), turnOver: false };
      }
      const a = r.answer;
      emitPick(wireAnswer(a));
      state.lastRead = a.allowed ? { kind: "known", allowed: a.allowed } : { kind: "unknown", ownPick: true };
      return { text: menu.receipt(call.name, a, order), turnOver: a.turnComplete };
    },
    notRun(reason: NotRunReason, name, detail) {
      switch (reason) {
        case "unknown-tool":
          return menu.unknownToolReceipt(name, lastAllowed(state), order);
        case "truncated":
          return menu.truncatedCallReceipt(name, lastAllowed(state), order);
        case "not-json":
          return menu.argumentsNotJsonReceipt(name, lastAllowed(state), order, detail?.sent);
        case "not-object":
          return menu.argumentsNotObjectReceipt(
            name,
            { sent: detail?.sent ?? "", kind: detail?.kind ?? "not a JSON object" },
            lastAllowed(state),
            order,
          );
        case "turn-over":
          return menu.NOT_RUN_TURN_OVER;
        case "stopped":
          return menu.NOT_RUN_STOPPED;
      }
    },
    async boundary(modelStopped) {
      const r = await deps.orchestrator.readSurfaceOnce(slot.iid, deps.boundaryReadMs);
      const read =
        r.kind === "surface"
          ? { kind: "read" as const, allowed: r.surface.allowed }
          : { kind: "failed" as const };
      const d = decideBoundary(
        { lastRead: state.lastRead, turnOver: false, stopped: false, modelStopped },
        read,
      );
      if (d.kind === "adopt") state.lastRead = { kind: "known", allowed: d.allowed };
      if (d.kind !== "restate") return undefined;
      state.lastRead = { kind: "known", allowed: d.allowed };
      return menu.restatement(d.allowed, order);
    },
    outputCut() {
      const allowed = lastAllowed(state);
      // Never ask a model that stopped to pick from an empty list (§7.5): the wake does.
      if (allowed !== undefined && allowed.length === 0) return undefined;
      return menu.outputCutRestatement(allowed, order);
    },
    usage({ unreported, finishReason, ...numbers }) {
      emit({
        type: "usage",
        submissionId,
        ...numbers,
        ...(unreported.length > 0 ? { unreported } : {}),
        ...(finishReason ? { finishReason } : {}),
      });
    },
    retry(n) {
      emit({ type: "retry", submissionId, model: who.model, ...n });
      logAt(deps, "warn", "model request retried", {
        ...where,
        attempt: n.attempt,
        waitMs: n.waitMs,
        cause: n.cause,
        detail: withoutServerText(n.message),
      });
    },
    trouble(level, msg, fields) {
      logAt(deps, level, msg, { ...where, ...fields });
    },
    message(role, text) {
      emit({ type: "message-appended", submissionId, role, text: deps.secrets.redact(text) });
    },
    transcript(entry) {
      // Tool results are redacted before the model sees them; this catches any other way in.
      emit({ type: "transcript", submissionId, entry: deps.secrets.redactValue(entry) });
    },
    workingText(kind, name, detail) {
      if (kind === "arguments") return menu.workingToolArgumentsReceipt(name, [detail]);
      if (kind === "outside-cwd") return menu.outsideCwdReceipt(name, detail, slot.cwd ?? "");
      return menu.workingToolFailed(name, detail);
    },
  };
}

/** Logs at `level` through the Harness's logger (or `log` with the level as a field). */
function logAt(deps: TurnDeps, level: "warn" | "error", msg: string, fields: Record<string, unknown>): void {
  const sink = level === "warn" ? deps.warn : deps.error;
  if (sink) sink(msg, fields);
  else deps.log(msg, { level, ...fields });
}
