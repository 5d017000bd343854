import type { Gate, RunDetail, RunSummary } from "@jr2/wire";
import type { AnyActorRef } from "xstate";
import type { RunBlob } from "../durability/store/run-store.js";
import { outcomeOfBlob, summaryOfBlob } from "../durability/store/run-store.js";
import { sumUsage } from "../durability/usage-totals.js";
import { readGate } from "../menu/gate-decisions.js";
import type { Registration } from "../turns/registration-table.js";
import { createRunFeed, type RunFeed } from "./feed.js";
import type { LiveRun } from "./live-run.js";

/**
 * `GET /runs/:runId` of one run: status, value and context (JSON-safe), open Gates, live Turns
 * and usage totals summed from its recorded model requests (ADR-0255), never the feed.
 * @see SPEC §4.1
 */
export function runDetailOf(run: LiveRun, turns: readonly Registration[]): RunDetail {
  const snapshot = run.actor.getSnapshot() as { value?: unknown; context?: unknown };
  return {
    runId: run.runId,
    workflow: run.workflow,
    status: run.status,
    value: toJson(snapshot.value ?? null),
    context: toJson(snapshot.context ?? null),
    gates: run.status === "running" ? [...run.gates.values()].map((gate) => gateOf(gate.actor)) : [],
    turns: turns.map((r) => ({ iid: r.iid, agent: r.agent, state: r.statePath, turnId: r.turnId })),
    usage: sumUsage(run.usage.values()),
    ...(run.fault ? { fault: run.fault } : {}),
    updatedAt: run.updatedAt.toISOString(),
    ...settledOf(run.outcome, snapshot.value),
    ...(run.faults.length > 0 ? { faults: structuredClone(run.faults) } : {}),
    input: toJson(run.input ?? null),
  };
}

/** `outcome` and `finalState` once the run settled (ADR-0062), else nothing. */
function settledOf(
  outcome: RunSummary["outcome"],
  value: unknown,
): Pick<RunSummary, "outcome" | "finalState"> {
  return outcome === undefined ? {} : { outcome, finalState: toJson(value ?? null) };
}

/** `GET /runs` item of one run. */
export function runSummaryOf(run: LiveRun): RunSummary {
  return {
    runId: run.runId,
    workflow: run.workflow,
    status: run.status,
    updatedAt: run.updatedAt.toISOString(),
    ...settledOf(run.outcome, (run.actor.getSnapshot() as { value?: unknown }).value),
    ...(run.status === "running" && run.gates.size > 0 ? { gates: [...run.gates.keys()] } : {}),
  };
}

/** A Gate as the wire carries it (meta made JSON-safe). */
export function gateOf(actor: AnyActorRef): Gate {
  const reading = readGate(actor);
  return {
    id: reading.id,
    path: reading.path,
    accepts: reading.accepts,
    acceptsNow: reading.acceptsNow,
    meta: toJson(reading.meta),
  };
}

/** A JSON-safe copy: context may hold actor refs or cycles, which must not break an answer. */
function toJson(value: unknown): unknown {
  const seen = new WeakSet<object>();
  try {
    const text = JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === "object" && v !== null) {
        if (seen.has(v)) return "[circular]";
        seen.add(v);
        if (typeof (v as { send?: unknown }).send === "function" && "sessionId" in v)
          return `[actor ${(v as { id?: string }).id}]`;
      }
      return typeof v === "function" || typeof v === "bigint" ? String(v) : v;
    });
    return text === undefined ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

/** `GET /runs/:runId` of a run served from its blob (settled or drifted): no Gates, no Turns. */
export function storedRunDetail(blob: RunBlob): RunDetail {
  const snapshot = (blob.snapshot ?? {}) as { value?: unknown; context?: unknown };
  return {
    runId: blob.runId,
    workflow: blob.workflow,
    status: blob.status,
    value: snapshot.value ?? null,
    context: snapshot.context ?? null,
    gates: [],
    turns: [],
    usage: blob.usage,
    ...(blob.fault ? { fault: blob.fault } : {}),
    updatedAt: blob.updatedAt,
    ...settledOf(outcomeOfBlob(blob), snapshot.value),
    ...(blob.faults?.length ? { faults: blob.faults } : {}),
    input: blob.input ?? null,
  };
}

/** `GET /runs` item of a run served from its blob. */
export function storedRunSummary(blob: RunBlob): RunSummary {
  return summaryOfBlob(blob);
}

/**
 * The feed of a run settled before the event log existed (ADR-0256; or a damaged run's): its
 * events are gone; one says how it ended, numbered 0.
 */
export function storedRunFeed(blob: RunBlob, now: () => Date): RunFeed {
  const feed = createRunFeed(now);
  const value = (blob.snapshot as { value?: unknown } | null)?.value ?? null;
  feed.append({
    type: "status",
    status: blob.status,
    value,
    ...(blob.fault ? { reason: blob.fault.reason } : {}),
    ...(outcomeOfBlob(blob) ? { outcome: outcomeOfBlob(blob) } : {}),
  });
  return feed;
}
