/**
 * The load check of Turn inputs (issue 22 §2): `jr2 menu` and `jr2 serve` call each Agent
 * invoke's **authored** input mapper once — the author's function, never jr2's wrapper that mints
 * ids or reads the ledger — in a try/catch, on the context the Machine's factory builds from the
 * input schema's defaults, and refuse an unknown Turn input key naming the state (the same
 * `JR2_ERR_SETUP_TURN_INPUT_KEY` a run would fault with at its first Turn). When a required input
 * has no default the check is skipped with one note; a mapper or context factory that throws on
 * that context is skipped too (it may need a real event). Never at restore: a restored child
 * keeps its persisted input.
 * @see SPEC §3.1; ADR-0272
 */
import { Jr2Error } from "@jr2/wire";
import type { AnyStateMachine } from "xstate";
import { modelOf } from "../menu/menu.js";
import { authoredTurnInputOf, TURN_INPUT_KEYS } from "./turn-input.js";

/**
 * Checks the Turn inputs `machine` (and each Machine it invokes) would give its Agents at start.
 * @returns notes in words (a check skipped, and why); empty when every mapper was called
 * @throws Jr2Error `JR2_ERR_SETUP_TURN_INPUT_KEY` naming the Agent, the state and the key
 */
export function checkTurnInputsAtLoad(workflow: string, machine: AnyStateMachine): string[] {
  const model = modelOf(machine);
  if (!model) return [];
  const input = defaultInput(model.info.inputSchema);
  if (!input.ok)
    return [
      `workflow ${workflow}: Turn inputs not checked at load: required input ${input.missing} has no default (a run's first Turn checks them)`,
    ];
  for (const { path, machine: inner } of model.info.machines) {
    const innerModel = modelOf(inner);
    if (!innerModel) continue;
    // A nested Machine's input comes from its invoker at run time: its factory is tried without one.
    const context = contextOf(inner, path === "" ? input.value : undefined);
    if (!context.ok) continue;
    for (const seat of innerModel.agentStates.values()) {
      if (seat.party.kind !== "agent") continue;
      const agent = seat.party.name;
      for (const invoke of seat.node.invoke) {
        if (invoke.src !== agent) continue;
        const authored = authoredTurnInputOf(invoke.input);
        let raw: unknown;
        try {
          raw =
            typeof authored === "function"
              ? (authored as (a: unknown) => unknown)({
                  context: context.value,
                  event: { type: "xstate.init" },
                })
              : authored;
        } catch {
          continue; // it may read an event or a context the start does not have: the run checks it
        }
        const state = [path, seat.statePath].filter((p) => p.length > 0).join("/") || "(root)";
        for (const key of typeof raw === "object" && raw !== null ? Object.keys(raw) : [])
          if (!(TURN_INPUT_KEYS as readonly string[]).includes(key))
            throw new Jr2Error("JR2_ERR_SETUP_TURN_INPUT_KEY", {
              agent,
              state,
              key,
              accepted: [...TURN_INPUT_KEYS],
            });
      }
    }
  }
  return [];
}

/** The input a run started with `{}` gets: the schema's defaults; or the first required field without one. */
function defaultInput(
  schema: {
    safeParse(v: unknown): {
      success: boolean;
      data?: unknown;
      error?: { issues: Array<{ path: PropertyKey[] }> };
    };
  } | null,
): { ok: true; value: unknown } | { ok: false; missing: string } {
  if (!schema) return { ok: true, value: undefined };
  const parsed = schema.safeParse({});
  if (parsed.success) return { ok: true, value: parsed.data };
  const path = parsed.error?.issues[0]?.path.map(String).join(".") || "(input)";
  return { ok: false, missing: `\`${path}\`` };
}

/** The context `machine`'s factory builds from `input` (its config's `context`); not ok when it throws. */
function contextOf(machine: AnyStateMachine, input: unknown): { ok: true; value: unknown } | { ok: false } {
  const factory = (machine.config as { context?: unknown }).context;
  if (typeof factory !== "function") return { ok: true, value: factory ?? {} };
  try {
    return { ok: true, value: (factory as (a: unknown) => unknown)({ input, spawn: () => undefined }) };
  } catch {
    return { ok: false };
  }
}
