/**
 * The start-up model check (issue 10 §5 "Model names"): every Agent `model` and every
 * statically known Turn-input `model` of the loaded workflows is looked up in the instance
 * Harness's table (`GET /models`) once the Harness first answers; each missing name is one
 * `warn` naming where it is used and how to add it. A Turn that still reaches a missing name
 * faults (`unknown-model`); this only says so before the first run.
 * @see ADR-0061
 */
import type { Logger } from "pino";
import { staticTurnInputOf } from "../authoring/turn-input.js";
import { modelOf } from "../menu/menu.js";
import type { WorkflowTable } from "../runs/run-host.js";
import type { HarnessEndpoint } from "../turns/harness-client.js";
import { listHarnessModels, type ModelListResult } from "../turns/harness-models.js";

/** One place a model name is used: an Agent's `model`, or a static Turn input's `model`. */
export interface ModelUse {
  model: string;
  workflow: string;
  agent: string;
  /** The invoking state's path (`a.b`; a nested Machine's prefixed by its invoke path). */
  state: string;
  source: "agent" | "turn-input";
}

/**
 * Every model name the workflows use where it is known without running them, in workflow,
 * Machine and state order; a use repeated (the same Agent invoked from nested Machines shared
 * by two paths) is listed once.
 */
export function modelUses(workflows: WorkflowTable): ModelUse[] {
  const uses: ModelUse[] = [];
  const seen = new Set<string>();
  const add = (use: ModelUse) => {
    const key = JSON.stringify(use);
    if (seen.has(key)) return;
    seen.add(key);
    uses.push(use);
  };
  for (const [workflow, machine] of workflows) {
    for (const { path, machine: inner } of modelOf(machine)?.info.machines ?? []) {
      const model = modelOf(inner);
      if (!model) continue;
      for (const seat of model.agentStates.values()) {
        if (seat.party.kind !== "agent") continue;
        const agent = seat.party.name;
        const state = [path, seat.statePath].filter((p) => p.length > 0).join("/") || "(root)";
        const definition = model.info.agents[agent]?.definition;
        if (definition) add({ model: definition.model, workflow, agent, state, source: "agent" });
        for (const inv of seat.node.invoke) {
          if (inv.src !== agent) continue;
          const input = staticTurnInputOf(inv.input);
          if (input?.model !== undefined)
            add({ model: input.model, workflow, agent, state, source: "turn-input" });
        }
      }
    }
  }
  return uses;
}

/** The uses whose model `known` lacks, grouped by model name (first use first). */
export function missingModels(uses: readonly ModelUse[], known: readonly string[]): Map<string, ModelUse[]> {
  const table = new Set(known);
  const missing = new Map<string, ModelUse[]>();
  for (const use of uses) {
    if (table.has(use.model)) continue;
    missing.set(use.model, [...(missing.get(use.model) ?? []), use]);
  }
  return missing;
}

/** What {@link checkModels} ended with (tests read it; start-up only logs). */
export type ModelCheckOutcome =
  | { kind: "checked"; missing: string[] }
  | { kind: "skipped"; reason: "no-route" | "refused" | "stopped" | "nothing-to-check" };

/** Options of {@link checkModels}. */
export interface ModelCheckOptions {
  workflows: WorkflowTable;
  /** The instance Harness and its bearer. */
  harness: HarnessEndpoint;
  logger: Logger;
  fetch?: typeof fetch;
  /** Between attempts while the Harness does not answer (ms): default 500 doubling to 30 000. */
  backoff?: { initialMs: number; maxMs: number };
  /** Per attempt (ms), default 5 000. */
  attemptTimeoutMs?: number;
  /** Stops the waiting (the service is closing). */
  signal?: AbortSignal;
}

/**
 * Waits until the instance Harness answers `GET /models` (retrying with backoff while it is
 * unreachable), then logs one `warn` per missing model name — `{ model, uses: [{ workflow,
 * agent, state, source }], known }` — saying how to add it. An older Harness without the route
 * (404) is skipped with an `info` line; a refusal (e.g. 401: the Harness expects another
 * JR2_HARNESS_TOKEN) is one `warn` and no check. Never throws; never delays start-up (the caller
 * does not await it before listening).
 * @see issue 10 §5 "Model names"
 */
export async function checkModels(options: ModelCheckOptions): Promise<ModelCheckOutcome> {
  const { logger } = options;
  const uses = modelUses(options.workflows);
  if (uses.length === 0) return { kind: "skipped", reason: "nothing-to-check" };
  const backoff = options.backoff ?? { initialMs: 500, maxMs: 30_000 };
  let waitMs = backoff.initialMs;
  let answer: ModelListResult;
  for (;;) {
    if (options.signal?.aborted) return { kind: "skipped", reason: "stopped" };
    const attempt = AbortSignal.timeout(options.attemptTimeoutMs ?? 5_000);
    const signal = options.signal ? AbortSignal.any([options.signal, attempt]) : attempt;
    answer = await listHarnessModels(options.harness, options.fetch ?? fetch, signal);
    if (answer.kind !== "unreachable") break;
    logger.debug(
      { harness: options.harness.url, error: answer.error, waitMs },
      "model check: the Harness does not answer yet",
    );
    await sleep(waitMs, options.signal);
    waitMs = Math.min(backoff.maxMs, waitMs * 2);
  }
  if (answer.kind === "no-route") {
    logger.info(
      { harness: options.harness.url },
      "model check skipped: the instance Harness has no GET /models (an older Harness)",
    );
    return { kind: "skipped", reason: "no-route" };
  }
  if (answer.kind === "refused") {
    logger.warn(
      { harness: options.harness.url, status: answer.status },
      `model check skipped: the instance Harness answered GET /models with ${answer.status}; check that JR2_HARNESS_TOKEN is the same on both services`,
    );
    return { kind: "skipped", reason: "refused" };
  }
  const missing = missingModels(uses, answer.names);
  for (const [model, at] of missing) {
    const where = at
      .map((u) => `Agent \`${u.agent}\` in state \`${u.state}\` of workflow \`${u.workflow}\``)
      .join("; ");
    logger.warn(
      { model, uses: at, known: answer.names },
      `model \`${model}\` is not in the instance Harness's model table (used by ${where}); a Turn on it will fault. Add a \`${model}\` entry — { baseUrl, id, contextWindow, maxTokens } — to the Harness's JR2_MODELS (inline JSON, or the models file named by JR2_MODELS=@file)`,
    );
  }
  if (missing.size === 0)
    logger.info({ models: [...new Set(uses.map((u) => u.model))] }, "model check: every model is served");
  return { kind: "checked", missing: [...missing.keys()] };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
