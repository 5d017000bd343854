/**
 * The Agent invoke's input mapper wrapper (§3.2, last bullets): it runs the author's mapper,
 * refuses unknown keys, and mints the iid and turnId — minting is not deterministic, and the
 * input is what persists with the child, so it happens here and nowhere else.
 * @see SPEC §3.1, §5.3, §5.4
 */
import { randomBytes, randomUUID } from "node:crypto";
import { Jr2Error, ThinkingLevel } from "@jr2/wire";
import type { AnyActorRef } from "xstate";
import { modelOf } from "../menu/menu.js";
import { actorPathOf, logicOf } from "../xstate/adapter.js";
import { runBindingOf, type TurnInput } from "../xstate/run-binding.js";

/** The keys an author may write in an Agent invoke's input. */
export const TURN_INPUT_KEYS = ["prompt", "cwd", "continue", "model", "thinkingLevel", "endpoint"] as const;

/** What an author writes: `{ prompt, cwd?, continue?: true, model?, thinkingLevel?, endpoint? }`. */
export interface AuthoredTurnInput {
  prompt: string;
  cwd?: string;
  continue?: true;
  model?: string;
  thinkingLevel?: ThinkingLevel;
  endpoint?: string;
}

/**
 * Checks an authored Turn input.
 * @throws Jr2Error `JR2_ERR_SETUP_TURN_INPUT_KEY` (a key outside {@link TURN_INPUT_KEYS}),
 *   `JR2_ERR_SETUP_TURN_INPUT_INVALID` (missing prompt, wrong types)
 */
export function checkTurnInput(raw: unknown, agent: string, state: string): AuthoredTurnInput {
  const where = { agent, state: state || "(root)" };
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new Jr2Error("JR2_ERR_SETUP_TURN_INPUT_INVALID", {
      ...where,
      detail: "expected an object `{ prompt, … }`",
    });
  }
  for (const key of Object.keys(raw)) {
    if (!(TURN_INPUT_KEYS as readonly string[]).includes(key)) {
      throw new Jr2Error("JR2_ERR_SETUP_TURN_INPUT_KEY", { ...where, key, accepted: [...TURN_INPUT_KEYS] });
    }
  }
  const r = raw as Record<string, unknown>;
  const bad = (detail: string) => new Jr2Error("JR2_ERR_SETUP_TURN_INPUT_INVALID", { ...where, detail });
  if (typeof r.prompt !== "string") throw bad("`prompt` must be a string");
  for (const key of ["cwd", "model", "endpoint"] as const) {
    if (r[key] !== undefined && typeof r[key] !== "string") throw bad(`\`${key}\` must be a string`);
  }
  if (r.continue !== undefined && r.continue !== true) throw bad("`continue` must be `true` or absent");
  if (r.thinkingLevel !== undefined && !ThinkingLevel.safeParse(r.thinkingLevel).success) {
    throw bad(`\`thinkingLevel\` must be one of ${ThinkingLevel.options.join(", ")}`);
  }
  return r as unknown as AuthoredTurnInput;
}

/** Joins path segments with `/`, skipping empty ones. */
function joinPath(...parts: string[]): string {
  return parts.filter((p) => p.length > 0).join("/");
}

type MapperArgs = { context: unknown; event: unknown; self: AnyActorRef };

/** Mappers built from a static input object → that object (a start-up check reads its `model`). */
const staticInputs = new WeakMap<object, AuthoredTurnInput>();

/** Wrappers → what the author wrote (a function or an object): the load check calls the author's. */
const authoredInputs = new WeakMap<object, unknown>();

/**
 * What the author wrote behind an Agent invoke's wrapped mapper (their function, or a static
 * object) — never the wrapper, which mints ids and reads the run (issue 22 §2). `undefined` for
 * anything else.
 */
export function authoredTurnInputOf(mapper: unknown): unknown {
  return typeof mapper === "function" ? authoredInputs.get(mapper) : undefined;
}

/**
 * The authored Turn input behind an Agent invoke's mapper when it was a static object (not a
 * function): what is known before any run, e.g. its `model` (model-check.ts). `undefined` for
 * a function input or any other value.
 */
export function staticTurnInputOf(mapper: unknown): AuthoredTurnInput | undefined {
  return typeof mapper === "function" ? staticInputs.get(mapper) : undefined;
}

/**
 * Wraps an Agent invoke's authored input (a mapper or a static object) into the mapper that
 * produces the finalized {@link TurnInput}.
 */
export function turnInputMapper(authored: unknown, agentName: string, statePath: string) {
  const mapper = (args: MapperArgs): TurnInput => {
    const raw = typeof authored === "function" ? (authored as (a: MapperArgs) => unknown)(args) : authored;
    const input = checkTurnInput(raw, agentName, statePath);
    const invoker = args.self;
    const binding = runBindingOf(invoker.system);
    const address = joinPath(binding?.runId ?? "local", actorPathOf(invoker), agentName);
    let iid = `${address}/${randomBytes(4).toString("hex")}`;
    if (input.continue) {
      const epoch = binding?.epochOf(address) ?? 0;
      iid = epoch > 0 ? `${address}/${epoch}` : address;
    }
    const seat = modelOf(logicOf(invoker))?.agentStates.get(`${agentName}\u0000${statePath}`);
    return {
      agentName,
      iid,
      turnId: randomUUID(),
      tools: [...(seat?.names ?? [])],
      prompt: input.prompt,
      ...(input.cwd !== undefined ? { cwd: input.cwd } : {}),
      ...(input.model !== undefined ? { model: input.model } : {}),
      ...(input.thinkingLevel !== undefined ? { thinkingLevel: input.thinkingLevel } : {}),
      ...(input.endpoint !== undefined ? { endpoint: input.endpoint } : {}),
      continuation: input.continue === true,
    };
  };
  if (typeof authored === "object" && authored !== null)
    staticInputs.set(mapper, authored as AuthoredTurnInput);
  authoredInputs.set(mapper, authored);
  return mapper;
}
