/**
 * The host's runs: where each one is found — live in memory, settled in the store (read back
 * when asked), damaged as its faulted stand-in (ADR-0254) — and the run routes over them:
 * start, get, feed, cancel (the list: `run-list.ts`). A settled run leaves memory once its settled blob committed
 * (ADR-0260).
 * @see SPEC §4.1, §8
 */
import {
  type CancelAnswer,
  type ControlClient,
  credentialInJson,
  Jr2Error,
  type RunDetail,
  type RunFeedEvent,
  type RunStatus,
  URL_CREDENTIAL_FIX,
} from "@jr2/wire";
import type { RunBlob } from "../durability/store/run-store.js";
import { sumUsage } from "../durability/usage-totals.js";
import type { MachineInfo } from "../menu/menu.js";
import { parseStrict } from "../menu/strict-keys.js";
import { cancelDrifted, statusChanged } from "./drifted-cancel.js";
import type { RunFeed } from "./feed.js";
import { type HostState, saveOrStop, serialized } from "./host-state.js";
import { LiveRun } from "./live-run.js";
import { countRunStarted } from "./run-telemetry.js";
import { runDetailOf, storedRunDetail } from "./run-views.js";
import { settledRunFeed } from "./settled-runs.js";
import { workflowInfo } from "./workflow-table.js";

/** The run's stored blob (a damaged run's stand-in first). @throws JR2_ERR_RUN_NOT_FOUND */
export async function storedBlob(state: HostState, runId: string): Promise<RunBlob> {
  const blob = state.damaged.get(runId) ?? (await state.store.load(runId));
  if (!blob) throw new Jr2Error("JR2_ERR_RUN_NOT_FOUND", { runId });
  return blob;
}

/** The run in memory. @throws JR2_ERR_RUN_NOT_LIVE (settled, from the store), JR2_ERR_RUN_NOT_FOUND */
export async function runOf(state: HostState, runId: string): Promise<LiveRun> {
  const run = state.runs.get(runId);
  if (run) return run;
  const blob = await storedBlob(state, runId);
  throw new Jr2Error("JR2_ERR_RUN_NOT_LIVE", { runId, status: blob.status });
}

/**
 * Once `run` settled: after its settled blob commits and every pick or Gate event of it in
 * flight finished (their feed events appended), it leaves memory (ADR-0260).
 */
export function evictWhenSaved(state: HostState, run: LiveRun): void {
  if (run.status === "running" || state.evicting.has(run)) return;
  state.evicting.add(run);
  state.persistence.afterCommit(run, () => {
    void serialized(state, run.runId, async () => {
      if (state.runs.get(run.runId) !== run) {
        state.evicting.delete(run); // not (yet) served from memory: restore adds it, then asks again
        return;
      }
      state.settledFeeds.remember(run.runId, run.feed.since());
      state.runs.delete(run.runId);
      // Its conversations' byte-exact history goes with it (issue 27); `bench:soak` reads the size.
      state.log.info({ runId: run.runId, historyBytes: run.histories.size }, "settled run left memory");
    });
  });
}

/**
 * Starts a run of `workflow`; resolves once it settled and its first save committed.
 * @throws JR2_ERR_WORKFLOW_NOT_FOUND, JR2_ERR_RUN_INPUT_INVALID, JR2_ERR_SERVICE_STOPPING,
 *   JR2_ERR_STORE_FAILING
 */
export async function startRun(
  state: HostState,
  workflow: string,
  input: unknown,
  runId: string = state.mintRunId(),
): Promise<{ runId: string }> {
  const info = workflowInfo(state.infos, workflow);
  const parsedInput = runInputOf(info, workflow, input);
  if (state.stopping) throw new Jr2Error("JR2_ERR_SERVICE_STOPPING");
  const run = new LiveRun({
    runId,
    workflow,
    machine: state.workflows.get(workflow)!,
    input: parsedInput,
    fingerprint: info.fingerprint,
    log: state.log,
    hooks: state.hooks,
  });
  state.runs.set(runId, run);
  state.log.info({ runId, workflow }, "run started");
  countRunStarted(state.telemetry, workflow);
  run.start();
  await run.settle();
  await saveOrStop(state, run);
  return { runId };
}

/**
 * `input` validated against the workflow's input schema, strictly: a typo (`taks`) must not
 * start a run with the default task. @throws JR2_ERR_RUN_INPUT_INVALID (with `issues`)
 */
function runInputOf(info: MachineInfo, workflow: string, input: unknown): unknown {
  refuseCredentialUrl(workflow, input);
  if (!info.inputSchema) return input;
  const parsed = parseStrict(info.inputSchema, input ?? {});
  if (!parsed.ok) {
    const { issues } = parsed;
    const detail = issues.map((i) => `${i.path.join(".") || "(input)"}: ${i.message}`).join("; ");
    throw new Jr2Error("JR2_ERR_RUN_INPUT_INVALID", { workflow, detail, issues });
  }
  return parsed.data;
}

/**
 * Refuses input holding a URL with a credential in it (ADR-0297): run input is stored, versioned
 * and shown, so it is refused before anything is kept. @throws JR2_ERR_RUN_INPUT_INVALID
 */
function refuseCredentialUrl(workflow: string, input: unknown): void {
  const found = credentialInJson(input);
  if (!found) return;
  const where = found.path.join(".") || "(input)";
  const message = `a URL holding a credential (${found.what}); jr2 keeps and shows run input, so remove it and ${URL_CREDENTIAL_FIX}`;
  throw new Jr2Error("JR2_ERR_RUN_INPUT_INVALID", {
    workflow,
    detail: `${where}: ${message}`,
    issues: [{ path: found.path, message }],
  });
}

/** `GET /runs/:runId`: from memory when live, else from the store. @throws JR2_ERR_RUN_NOT_FOUND */
export async function getRun(state: HostState, runId: string): Promise<RunDetail> {
  const run = state.runs.get(runId);
  if (run) return runDetailOf(run, state.registrations.ofRun(runId));
  const blob = await storedBlob(state, runId);
  // Left memory while the store was read: memory has the newer view.
  const since = state.runs.get(runId);
  if (since) return runDetailOf(since, state.registrations.ofRun(runId));
  // Totals from the recorded rows: usage read after the last save counts too (ADR-0255).
  const usage = state.damaged.has(runId) ? [] : await state.store.usage(runId);
  return storedRunDetail(usage.length > 0 ? { ...blob, usage: sumUsage(usage) } : blob);
}

/**
 * The run's feed as memory holds it: a live run's tail; a recently settled run's as it ended
 * (ADR-0260); an older settled run's none (its log is in the store, {@link eventLogPage}), or,
 * settled before the log existed, its one status event from the blob. @throws JR2_ERR_RUN_NOT_FOUND
 */
export async function feedOf(state: HostState, runId: string): Promise<RunFeed> {
  const run = state.runs.get(runId);
  if (run) return run.feed;
  const blob = await storedBlob(state, runId);
  const kept = state.settledFeeds.get(runId);
  const logged =
    kept === undefined && !state.damaged.has(runId) && (await state.store.lastEventSeq(runId)) !== undefined;
  return state.runs.get(runId)?.feed ?? settledRunFeed(blob, state.now, kept, logged);
}

/**
 * One page of the run's stored event log (ADR-0256): up to `limit` events with `seq >= from`;
 * none for a damaged run (served as its stand-in's one status event).
 */
export async function eventLogPage(
  state: HostState,
  runId: string,
  from: number,
  limit: number,
): Promise<RunFeedEvent[]> {
  return state.damaged.has(runId) ? [] : state.store.events(runId, from, limit);
}

/**
 * `POST /runs/:runId/cancel`: ends a running run as `cancelled` and saves it; a drifted run is
 * closed without a Machine ({@link cancelDrifted}, issue 22). With `ask.expect` (the status the
 * caller saw) a run whose status changed since is left alone.
 * @throws JR2_ERR_STORE_FAILING (frozen), JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_NOT_LIVE (settled),
 *   JR2_ERR_RUN_STATUS_CHANGED (not `ask.expect`, or a racing resume won; naming that action)
 */
export async function cancelRun(
  state: HostState,
  runId: string,
  ask: { expect?: RunStatus; by?: ControlClient } = {},
): Promise<CancelAnswer> {
  state.frozenRuns.refuseIfFrozen(runId);
  const live = await serialized(state, runId, async () => {
    const run = state.runs.get(runId);
    const status = run?.status ?? (await storedBlob(state, runId)).status;
    if (ask.expect !== undefined && status !== ask.expect)
      throw await statusChanged(state, runId, ask.expect, status);
    if (run) return run;
    const blob = await storedBlob(state, runId);
    if (blob.status === "drifted" && !state.damaged.has(runId))
      return cancelDrifted(state, blob, ask.by ?? "http");
    throw new Jr2Error("JR2_ERR_RUN_NOT_LIVE", { runId, status: blob.status });
  });
  if (!(live instanceof LiveRun)) return live;
  const run = live;
  if (run.status !== "running") throw new Jr2Error("JR2_ERR_RUN_NOT_LIVE", { runId, status: run.status });
  run.cancel();
  await run.settle();
  await saveOrStop(state, run);
  state.log.info({ runId }, "run cancelled");
  return { runId, status: run.status };
}
