import { randomUUID } from "node:crypto";
import type { Admission, ConversationHistory, Notice, SubmissionRequest } from "@jr2/wire";
import { crashPoint } from "../durability/crash-points.js";
import type { LedgerEntry } from "../durability/store/run-store.js";
import { ARRIVAL_RESENDS, askArrival } from "./arrival-check.js";
import { faultOfRefusal } from "./fault-causes.js";
import type { HealthResult } from "./harness-client.js";
import { judgeInTransit } from "./lost-admission.js";
import { STORE_FAILING_WAIT_MS, storeFailingWait } from "./store-failing-wait.js";
import type { TurnPorts } from "./turn-ports.js";
import {
  abortRemote,
  backoff,
  endTurn,
  isOver,
  modelOf,
  sleep,
  type TurnState,
  until,
} from "./turn-state.js";

/**
 * A Turn's admissions (SPEC §5.3–§5.5): the ledgered admission it re-attaches to, the
 * Submission it sends next, the admission with its re-sends and its faults, the ledger write
 * before the stream is followed, and the re-admission on a new conversation after a loss.
 */

/** Re-admissions of one Turn after the Harness lost its admission in transit (a poison request bound). */
const IN_TRANSIT_READMITS = 2;

/** The Submission a Turn sends next, and whether it waits for Rest first. */
export interface NextSubmission {
  kind: "task" | "nudge";
  /** Admit on the existing conversation (`kept: true`, §5.3); a nudge always is. */
  kept: boolean;
  notices: Notice[];
  /** After a lost conversation: wait for Rest before admitting (spends no budget). */
  waitForRest: boolean;
  /** The conversation's byte-exact history, pushed after a 404 so the Harness rebuilds it (issue 27). */
  history?: ConversationHistory;
}

/** Where a Turn starts: the ledgered admission it re-attaches to, if any, and what it sends. */
export interface TurnStart {
  ledgered: LedgerEntry | undefined;
  next: NextSubmission;
  /**
   * Where the first admission's stream is read from when nothing of this Turn is ledgered:
   * the last ledgered offset on this iid, or the stream's start. A Submission of this very
   * Turn admitted just before a kill (the admit-sent window) ran unledgered; its usage and
   * transcript sit between here and the new admission's offset (ADR-0257).
   */
  catchUpFrom: string | undefined;
}

/**
 * Reads the ledger at the Turn's iid (§5.4): an admission with this Turn's turnId is followed
 * again (no turnId: the iid alone decides); otherwise the task is admitted — `kept: true` on an
 * existing continued conversation (§5.3).
 */
export function reattach(state: TurnState): TurnStart {
  const { input } = state.ports;
  const earlier = state.ports.ledgerRead(state.iid);
  const ledgered =
    earlier && (input.turnId === null || earlier.turnId === input.turnId) ? earlier : undefined;
  if (ledgered)
    state.ports.log("info", "re-attaching to the ledgered admission", {
      submissionId: ledgered.submissionId,
    });
  return {
    ledgered,
    next: {
      kind: "task",
      kept: input.continuation && earlier !== undefined,
      // An operator moved the Turn onto a new conversation (ADR-0271): it is told so.
      notices: input.fresh && earlier === undefined ? [{ type: "conversation-new" }] : [],
      waitForRest: false,
    },
    catchUpFrom: ledgered ? undefined : (earlier?.offset ?? "0"),
  };
}

/**
 * The offset a Turn's first admission is followed from: `catchUpFrom` when it is an earlier
 * place in the same stream (the Harness's offsets are event counts), else the admission's own.
 * An offset from before a Harness restart (a larger count than the new stream holds) or an
 * opaque one is never used: reading past a stream's end reads as a lost conversation.
 */
export function followFrom(admitted: LedgerEntry, catchUpFrom: string | undefined): string {
  const counts = /^\d+$/;
  if (catchUpFrom === undefined || !counts.test(catchUpFrom) || !counts.test(admitted.offset))
    return admitted.offset;
  return Number(catchUpFrom) <= Number(admitted.offset) ? catchUpFrom : admitted.offset;
}

/** The request body of `next` (§7.1). */
export function submissionOf(ports: TurnPorts, next: NextSubmission): SubmissionRequest {
  const { input } = ports;
  const { kind, notices } = next;
  const kept = next.kept || kind === "nudge";
  return {
    agent: input.agentName,
    kind,
    definition: ports.definition,
    ...(kind === "task" ? { prompt: input.prompt } : {}),
    ...(ports.cwd ? { cwd: ports.cwd } : {}),
    ...(ports.cwd && ports.state ? { state: ports.state } : {}),
    ...(ports.network ? { network: ports.network === "host" ? "host" : [...ports.network] } : {}),
    ...(input.model ? { model: input.model } : {}),
    ...(input.thinkingLevel ? { thinkingLevel: input.thinkingLevel } : {}),
    ...(kept ? { kept: true } : {}),
    ...(input.turnId ? { turnId: input.turnId } : {}),
    ...(notices.length ? { notices } : {}),
    ...(kept && next.history ? { history: next.history } : {}),
  };
}

/** What admitting a Submission came to. */
export type Admitted =
  /** Admitted and ledgered: follow its stream. */
  | { kind: "admitted"; entry: LedgerEntry }
  /** The conversation is gone (or the admission provably lost): admit on a new one. */
  | { kind: "lost"; reason?: string }
  /** The Turn faulted or ended meanwhile: nothing more to do. */
  | { kind: "ended" };

/**
 * Admits `next` and ledgers the admission before anything follows it (§5.4): waits for Rest
 * first where `next` says so; the feed's `admission` line is told before the ledger's save (ADR-0284).
 */
export async function admitNext(state: TurnState, next: NextSubmission): Promise<Admitted> {
  const { ports } = state;
  if (next.waitForRest) {
    await until(state, () => ports.atRest());
    if (isOver(state)) return { kind: "ended" };
  }
  const admission = await admit(state, submissionOf(ports, next));
  if (admission === "failed") return { kind: "ended" };
  if (admission === "lost") return { kind: "lost" };
  if (admission === "in-transit-lost")
    return {
      kind: "lost",
      reason: "the Harness lost the admission in transit; admitted on a new conversation",
    };
  crashPoint("admit-sent");
  const entry: LedgerEntry = {
    turnId: ports.input.turnId,
    ...admission,
    ...(ports.traceparent ? { traceparent: ports.traceparent } : {}),
  };
  // Told before the ledger's save (ADR-0284): a pick of this Submission may be decided while
  // that save is in flight (a PostgreSQL round trip), and its feed line must come after this
  // one. Read after the admission: the Machine has settled the macrostep that started this Turn.
  ports.telemetry({ type: "admission", kind: next.kind, allowed: ports.allowed() });
  await ports.ledgerWrite(state.iid, entry);
  crashPoint("ledgered");
  return { kind: "admitted", entry };
}

/**
 * Admits one Submission; re-sends only what provably never left the host (§5.5), or what the
 * Harness provably lost in transit (issue 16 item 5). `lost`: admit the task again on a new
 * conversation. `/healthz` is read before each POST so a failure in transit can be judged
 * against the Harness process that took it.
 */
async function admit(
  state: TurnState,
  body: SubmissionRequest,
): Promise<Admission | "lost" | "in-transit-lost" | "failed"> {
  const { ports } = state;
  const { config } = ports;
  const started = Date.now();
  const harnessUrl = ports.client.endpoint.url;
  // One id per Submission, kept across its re-sends: asked about after a reset (ADR-0288).
  const sent: SubmissionRequest = { ...body, clientSubmissionId: body.clientSubmissionId ?? randomUUID() };
  const clientSubmissionId = sent.clientSubmissionId as string;
  let resends = 0;
  let waitedForStore = 0;
  for (let n = 0; ; n++) {
    if (state.stopped) return "failed";
    const before = await ports.client.health?.();
    const result = await ports.outbound.run(state.iid, () =>
      ports.client.admit(state.iid, sent, ports.traceparent),
    );
    if (result.kind === "admitted") return result.admission;
    if (result.kind === "unknown" && !isOver(state)) {
      const asked = await askArrival(ports.client, state.iid, clientSubmissionId, before);
      if (asked.kind === "arrived") {
        ports.log("warn", "the admission's answer was cut in transit; the Harness says it arrived", {
          clientSubmissionId,
          error: result.error,
        });
        return asked.admission;
      }
      if (asked.kind === "resend" && resends++ < ARRIVAL_RESENDS) {
        ports.telemetry({
          type: "retry",
          attempt: n + 1,
          reason: `admission reset in transit (${result.error}) and ${asked.why}: sent again`,
        });
        continue;
      }
    }
    if (result.kind === "lost") return "lost";
    if (result.kind === "unsent" && Date.now() - started < config.admitWindowMs) {
      ports.telemetry({ type: "retry", attempt: n + 1, reason: `admission not sent: ${result.error}` });
      await sleep(state, backoff(state, n));
      continue;
    }
    if (result.kind === "unknown") return afterInTransit(state, result.error, before);
    if (result.kind === "refused") {
      const bound = config.storeFailingWaitMs ?? STORE_FAILING_WAIT_MS;
      const wait = storeFailingWait(result, waitedForStore, bound);
      if (wait) {
        ports.telemetry({ type: "retry", attempt: n + 1, reason: wait.reason });
        ports.log("warn", "the Harness store refuses writes; the admission waits and is sent again", {
          waitMs: wait.waitMs,
          waitedMs: waitedForStore,
          boundMs: bound,
        });
        waitedForStore += wait.waitMs;
        await sleep(state, wait.waitMs);
        continue;
      }
      const fault = faultOfRefusal(result.status, result.body, {
        harnessUrl,
        agent: ports.input.agentName,
        model: modelOf(ports),
      });
      endTurn(
        state,
        waitedForStore > 0
          ? {
              ...fault,
              detail: `${fault.detail} (after waiting ${Math.round(waitedForStore / 100) / 10} s for the Harness store)`,
            }
          : fault,
      );
    } else {
      endTurn(state, {
        reason: "infra",
        detail: `admission failed: the Harness at ${harnessUrl} could not be reached within ${config.admitWindowMs} ms (${result.error})`,
        cause: "unavailable",
      });
    }
    return "failed";
  }
}

/**
 * The admission's request failed in transit: admit again only if the Harness provably lost
 * it, after aborting the old iid (abort is never 404); otherwise fault `infra` /
 * `unavailable` (ADR-0037). Waiting for the Harness spends no budget.
 */
async function afterInTransit(
  state: TurnState,
  error: string,
  before: HealthResult | undefined,
): Promise<"in-transit-lost" | "failed"> {
  const { ports } = state;
  const verdict = await judgeInTransit({
    client: ports.client,
    iid: state.iid,
    offset: ports.ledgerRead(state.iid)?.offset ?? "0",
    before,
    windowMs: ports.config.admitWindowMs,
    now: () => Date.now(),
    sleep: (ms) => sleep(state, ms),
    backoff: (n) => backoff(state, n),
    stopped: () => isOver(state),
    onWait: (n, _waitMs, why) =>
      ports.telemetry({ type: "retry", attempt: n, reason: `waiting for the Harness to answer: ${why}` }),
  });
  // A Turn that ended while the Harness was probed reseats nothing and faults nothing.
  if (verdict.kind === "stopped" || isOver(state)) return "failed";
  if (verdict.kind === "lost" && ++state.inTransitLosses > IN_TRANSIT_READMITS) {
    // A request that kills the Harness each time it arrives must not crash-loop it.
    endTurn(state, {
      reason: "infra",
      detail: `${verdict.why}: the Harness lost this Turn's admission in transit ${state.inTransitLosses} times; it is not sent again`,
      cause: "unavailable",
    });
    return "failed";
  }
  if (verdict.kind === "lost") {
    ports.log(
      "warn",
      "the admission was lost with the Harness; the old iid is aborted and the Turn admitted again",
      {
        why: verdict.why,
        error,
      },
    );
    await abortRemote(state);
    return isOver(state) ? "failed" : "in-transit-lost";
  }
  endTurn(state, {
    reason: "infra",
    detail:
      verdict.kind === "older"
        ? `admission failed: ${error} (the Harness at ${ports.client.endpoint.url} tells no bootId, so whether it took the admission cannot be known)`
        : `${verdict.detail}; the request failed with ${error}`,
    cause: "unavailable",
  });
  return "failed";
}

/**
 * The Harness lost the conversation (it restarted): the next admission is the task on a new
 * one (§5.3, §5.7), told the answer of the Turn's newest pick — the new conversation never
 * read it (§5.6). It waits for Rest first: a Turn cut while its state works is admitted once
 * that work is done, and spends no budget. Reseats the Turn (a new iid or epoch) and says so
 * on the feed.
 */
export function onConversationLost(
  state: TurnState,
  reason = "conversation lost; admitted on a new one",
): NextSubmission {
  const { ports } = state;
  state.iid = ports.reseat();
  const last = ports.lastAnswer();
  const notices: Notice[] = [
    { type: "conversation-new" },
    ...(last ? [{ type: "pick-answer" as const, pick: last.pick, answer: last.answer }] : []),
  ];
  ports.telemetry({ type: "retry", attempt: ++state.attempt, reason });
  return { kind: "task", kept: false, notices, waitForRest: true };
}
