import type { PickAnswer, StreamEvent, TolerantPickAnswer } from "@jr2/wire";
import type { NotRunReason, RunHooks } from "../engine/pi/engine-pi.js";
import * as menu from "../presenters/menu.js";
import { forLog } from "../provider/provider-errors.js";
import { decideBoundary, type LastRead } from "./between-steps.js";
import { countInvented, countPick, newRefusalCount } from "./refusal-budget.js";
import { refusedPickAnswer } from "./refused-pick.js";
import { logAt, type SeatSlot, type TurnDeps } from "./turn-deps.js";

/**
 * Phase 4's hooks (§7.4, §7.5): a pick delivered and its receipt, a call not run and its
 * receipt, the step boundary's restatement, the output-cut restatement, and the observers
 * (usage, retries, messages, transcript). Every text comes from menu.ts.
 */

/** What the model last read (§7.5). */
export interface TurnState {
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

/** Model entries whose misreported usage was logged, per Harness (its deps): once each (issue 25 §6). */
const misreportLogged = new WeakMap<TurnDeps, Set<string>>();

/** True the first time `model` is seen for `deps`. */
function onceFor(deps: TurnDeps, model: string): boolean {
  const seen = misreportLogged.get(deps) ?? new Set<string>();
  misreportLogged.set(deps, seen);
  if (seen.has(model)) return false;
  seen.add(model);
  return true;
}

/** Phase 4's hooks: pick delivery and receipts, boundary restatements, observers. */
export function turnHooks(
  slot: SeatSlot,
  submissionId: string,
  /** The Submission's turnId: sent with each pick, so a re-send finds its own Turn's answer (ADR-0252). */
  who: { turnId: string | undefined; model: string; refusalBudget?: number; agent?: string; state?: string },
  state: TurnState,
  deps: TurnDeps,
  emit: (e: StreamEvent) => void,
): RunHooks {
  const order = slot.menuOrder;
  const turnId = who.turnId;
  const where = { iid: slot.iid, turnId, model: who.model };
  let picks = 0;
  const refusals = newRefusalCount(who.refusalBudget);
  return {
    async menuCall(call) {
      // The idempotency key (§4.3): the model's tool-call id made unique within the Submission —
      // providers that number ids per answer ("call_0") reuse them across steps. Re-sends of this
      // pick (inside postPick) keep the key; the model's id stays readable in it.
      const key = `${submissionId}/${++picks}/${call.toolCallId}`.slice(0, 512);
      // A commit per pick (issue 28 §3): the Worktree committed before the pick leaves, its id on it.
      const commit =
        slot.cwd && slot.hasWorkingTools && deps.workspaces
          ? await deps.workspaces
              .commitAt(slot.cwd, {
                agent: who.agent ?? "agent",
                // The Turn's state as the Orchestrator names it (ADR-0220); an older one sends none.
                state: who.state ?? slot.iid,
                pick: call.name,
              })
              .catch((error: unknown) => {
                logAt(deps, "warn", "the Worktree could not be committed before a pick", {
                  iid: slot.iid,
                  error: String(error),
                });
                return undefined;
              })
          : undefined;
      const body = { ...call, toolCallId: key, ...(commit ? { commit } : {}) };
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
      const halt = countPick(refusals, call.name, a, lastAllowed(state), who.model);
      state.lastRead = a.allowed ? { kind: "known", allowed: a.allowed } : { kind: "unknown", ownPick: true };
      return { text: menu.receipt(call.name, a, order), turnOver: a.turnComplete, ...(halt ? { halt } : {}) };
    },
    invented(name) {
      return countInvented(refusals, name, lastAllowed(state), who.model);
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
        case "duplicate":
          return menu.NOT_RUN_DUPLICATE;
        case "merged":
          return menu.NOT_RUN_MERGED;
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
      if (numbers.misreported && onceFor(deps, who.model))
        logAt(
          deps,
          "warn",
          "the model server reported more cached tokens than prompt tokens; shown as unreported (logged once per model entry)",
          {
            ...where,
            misreported: numbers.misreported,
          },
        );
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
        detail: forLog(n.message),
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
      if (kind === "repeated") return menu.repeatedCallNote(name, Number(detail));
      return menu.workingToolFailed(name, detail);
    },
  };
}
