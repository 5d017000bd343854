/**
 * `jr2Setup(...)`: xstate's `setup()` plus jr2's vocabulary and checks. Its `createMachine`
 * transforms the config (per-transition guard wrapping, Agent input mappers, Gate ids), builds
 * the Machine with public API, and walks it once (menu-walk.ts).
 * @see SPEC §3.1, §3.2, §13 "xstate 5.33 facts"
 */
import { Jr2Error } from "@jr2/wire";
import { type AnyStateMachine, type MachineContext, setup } from "xstate";
import { z } from "zod";
import type { EventDef } from "../menu/event-def.js";
import { agentDefinitionOf, isGateLogic, workspaceBodyOf } from "../menu/marks.js";
import { modelOf, registerModel } from "../menu/menu.js";
import { walkMachine } from "../menu/menu-walk.js";
import { isCompositeGuard, wrapLeafGuard, wrapTransitionGuard } from "../xstate/adapter.js";
import { gate } from "./gate.js";
import type { Jr2Machine, Jr2Setup, Jr2SetupOptions, ParamsMap, RunInputOf } from "./setup-types.js";
import { checkTurnInput, turnInputMapper } from "./turn-input.js";

export type { Jr2Machine, Jr2MachineConfig, Jr2SetupOptions } from "./setup-types.js";

type Obj = Record<string, unknown>;

interface TransformContext {
  actors: Record<string, unknown>;
  guardNames: Map<string, string>;
  authoredIds: Set<string>;
}

function guardName(guard: unknown): string {
  if (typeof guard === "string") return guard;
  if (typeof guard === "object" && guard !== null && "type" in guard) return String(guard.type);
  return isCompositeGuard(guard) ? "composite" : "inline";
}

function transformTransitions(value: unknown, tidBase: string, ctx: TransformContext): unknown {
  const list = Array.isArray(value) ? value : [value];
  const out = list.map((t, i) => {
    if (typeof t !== "object" || t === null || !("guard" in t) || (t as Obj).guard === undefined) return t;
    const tid = `${tidBase}#${i}`;
    const authored = (t as Obj).guard;
    ctx.guardNames.set(tid, guardName(authored));
    const leaf =
      typeof authored === "function" && !isCompositeGuard(authored)
        ? wrapLeafGuard(authored as () => boolean)
        : authored;
    return { ...(t as Obj), guard: wrapTransitionGuard(leaf, tid) };
  });
  return Array.isArray(value) ? out : out[0];
}

function transformInvoke(inv: Obj, statePath: string, index: number, ctx: TransformContext): Obj {
  const src = inv.src;
  // xstate resolves a string src only when the actor starts, and an unknown one errors the
  // run into a snapshot that cannot be saved: refuse it here, where the author can see it.
  if (typeof src === "string" && !Object.hasOwn(ctx.actors, src)) {
    throw new Jr2Error("JR2_ERR_SETUP_INVOKE_SRC_UNKNOWN", {
      state: statePath || "(root)",
      src,
      declared: Object.keys(ctx.actors).join(", "),
    });
  }
  const logic = typeof src === "string" ? ctx.actors[src] : src;
  const generatedId = index === 0 ? statePath || "(root)" : `${statePath || "(root)"}#${index}`;
  if (typeof inv.id === "string") ctx.authoredIds.add(inv.id);
  if (agentDefinitionOf(logic) && typeof src === "string") {
    if (typeof inv.input !== "function") checkTurnInput(inv.input, src, statePath);
    return { ...inv, input: turnInputMapper(inv.input, src, statePath) };
  }
  if (isGateLogic(logic) || workspaceBodyOf(logic) || modelOf(logic)) {
    return { ...inv, id: inv.id ?? generatedId };
  }
  return inv;
}

function transformState(config: Obj, path: string[], ctx: TransformContext): Obj {
  const out: Obj = { ...config };
  const statePath = path.join(".");
  if (config.on && typeof config.on === "object") {
    out.on = Object.fromEntries(
      Object.entries(config.on as Obj).map(([key, t]) => [
        key,
        transformTransitions(t, `${statePath}#${key}`, ctx),
      ]),
    );
  }
  if (config.invoke) {
    const list = (Array.isArray(config.invoke) ? config.invoke : [config.invoke]) as Obj[];
    const mapped = list.map((inv, i) => transformInvoke(inv, statePath, i, ctx));
    out.invoke = Array.isArray(config.invoke) ? mapped : mapped[0];
  }
  if (config.states && typeof config.states === "object") {
    out.states = Object.fromEntries(
      Object.entries(config.states as Obj).map(([key, s]) => [
        key,
        transformState(s as Obj, [...path, key], ctx),
      ]),
    );
  }
  return out;
}

/**
 * Starts a jr2 Machine definition: xstate's `setup()` with the event vocabulary, the built-in
 * `gate` actor and the workflow input schema. Types only (setup-types.ts, ADR-0010): every guard,
 * action and mapper of `createMachine` reads the events declared here, typed from their zod
 * inputs, the context its factory returns (or `types.context`) and the run input `input` parses to.
 * @throws Jr2Error `JR2_ERR_SETUP_EVENT_DUPLICATE` (two defs with one name)
 * @returns `{ createMachine(config) }`; createMachine throws `JR2_ERR_SETUP_EVENT_UNKNOWN`,
 *   `JR2_ERR_SETUP_INVOKE_CONFLICT`, `JR2_ERR_SETUP_AGENT_FAULT_UNROUTED`,
 *   `JR2_ERR_SETUP_AGENT_INVALID`, `JR2_ERR_SETUP_TURN_INPUT_KEY`, `JR2_ERR_SETUP_TURN_INPUT_INVALID`,
 *   `JR2_ERR_SETUP_INVOKE_SRC_UNKNOWN` (an invoke `src` string that is no declared actor nor `gate`)
 * @see SPEC §3.1, §3.2
 * @example jr2Setup({ events: [approve], actors: { reviewer: agent({...}) } }).createMachine({ ... })
 */
export function jr2Setup<
  TDefs extends readonly EventDef[],
  // xstate's setup() defaults: no actors, guards, actions, delays.
  TActors extends Record<string, unknown> = {},
  TGuards extends ParamsMap = {},
  TActions extends ParamsMap = {},
  TDelay extends string = never,
  TSchema extends z.ZodObject | undefined = undefined,
  // biome-ignore lint/suspicious/noExplicitAny: undeclared context and input stay loose (ADR-0010).
  TContext extends MachineContext = any,
  // biome-ignore lint/suspicious/noExplicitAny: see above
  TInput = any,
>(
  options: Jr2SetupOptions<TDefs, TContext, TActors, TGuards, TActions, TDelay, TSchema, TInput>,
): Jr2Setup<TDefs, TContext, TActors, TGuards, TActions, TDelay, RunInputOf<TSchema, TInput>> {
  const defs = new Map<string, EventDef>();
  for (const def of options.events) {
    if (defs.has(def.name)) throw new Jr2Error("JR2_ERR_SETUP_EVENT_DUPLICATE", { name: def.name });
    defs.set(def.name, def);
  }
  if (options.input !== undefined && !(options.input instanceof z.ZodObject)) {
    throw new Jr2Error("JR2_ERR_SETUP_EVENT_INPUT_INVALID", {
      name: "(workflow input)",
      got: typeof options.input,
    });
  }
  const actors = { ...(options.actors ?? {}), gate };
  const guards = Object.fromEntries(
    Object.entries(options.guards ?? {}).map(([k, g]) => [
      k,
      typeof g === "function" && !isCompositeGuard(g) ? wrapLeafGuard(g as () => boolean) : g,
    ]),
  );
  const base = setup({
    // biome-ignore lint/suspicious/noExplicitAny: the implementations are the author's, typed by xstate at their definition.
    actors: actors as any,
    // biome-ignore lint/suspicious/noExplicitAny: see above
    guards: guards as any,
    // biome-ignore lint/suspicious/noExplicitAny: see above
    actions: (options.actions ?? {}) as any,
    // biome-ignore lint/suspicious/noExplicitAny: see above
    delays: (options.delays ?? {}) as any,
  });
  return {
    createMachine(config: unknown): Jr2Machine {
      const ctx: TransformContext = { actors, guardNames: new Map(), authoredIds: new Set() };
      const transformed = transformState(config as Obj, [], ctx);
      // biome-ignore lint/suspicious/noExplicitAny: the transformed config keeps the author's shape.
      const machine = base.createMachine(transformed as any) as AnyStateMachine;
      const model = walkMachine(
        machine,
        { defs, actors, input: options.input ?? null, guardNames: ctx.guardNames },
        ctx.authoredIds,
      );
      registerModel(machine, model);
      return machine;
    },
  };
}
