/**
 * What the walk fixes for a Machine (its Menus, derived sets, Gates, writings' owners, the
 * fingerprint) and the registry that keeps it beside the Machine, read by every decision below
 * without recomputing. Its own module so the walk (which reads nested Machines' models) and
 * the readers of `menu.ts` share it without importing each other.
 * @see SPEC §3.3, §4.1
 */
import type { AgentDefinition, Tool } from "@jr2/wire";
import type { AnyStateMachine } from "xstate";
import type { z } from "zod";
import type { StateNodeLike } from "../xstate/adapter.js";
import type { EventDef } from "./event-def.js";

/** A stable warning the load logs once (pino `warn`). */
export interface MachineWarning {
  code: "JR2_WARN_MENU_WRITINGS_DIFFER" | "JR2_WARN_OUTCOME_UNDECLARED";
  message: string;
}

/** What a Machine offers the outside: Menus, derived sets, Gates, nested Machines. @see SPEC §3.3, §4.1 */
export interface MachineInfo {
  id: string;
  inputSchema: z.ZodObject | null;
  inputJsonSchema: Record<string, unknown> | null;
  agents: Record<string, { definition: AgentDefinition; menu: Tool[]; states: Record<string, string[]> }>;
  gates: Record<string, { accepts: Tool[] }>;
  /** The Machine itself (path `""`) and every Machine it invokes (e.g. `workspace()` bodies). */
  machines: Array<{ path: string; machine: AnyStateMachine }>;
  events: Map<string, EventDef>;
  warnings: MachineWarning[];
  /** sha256 over the shape restore depends on, and the Menu bytes (§8). */
  fingerprint: string;
}

/** A state that invokes an Agent or a Gate, with the names it handles (its derived set). */
export interface InvokingState {
  readonly node: StateNodeLike;
  readonly statePath: string;
  readonly party: { kind: "agent"; name: string } | { kind: "gate"; invokeId: string; authored: boolean };
  /** Menu order (UTF-16 code units). */
  readonly names: readonly string[];
}

/** The walk's full result: the public info plus what the live readings need. */
export interface MachineModel {
  readonly info: MachineInfo;
  /** state node id → the id of the state owning its writings (itself, or the nearest invoking ancestor); null = shared. */
  readonly ownerOf: ReadonlyMap<string, string | null>;
  /** `${agent}\u0000${statePath}` → its invoking state. */
  readonly agentStates: ReadonlyMap<string, InvokingState>;
  /** Gate invoke id → its invoking state. */
  readonly gateStates: ReadonlyMap<string, InvokingState>;
  /** Agent name → its Menu. */
  readonly menus: ReadonlyMap<string, readonly Tool[]>;
}

/** What the walk needs from jr2Setup besides the Machine. */
export interface WalkContext {
  readonly defs: ReadonlyMap<string, EventDef>;
  readonly actors: Readonly<Record<string, unknown>>;
  readonly input: z.ZodObject | null;
  /** transition id (`statePath#name#i`) → guard descriptor, for the fingerprint. */
  readonly guardNames: ReadonlyMap<string, string>;
}

// Keyed by the Machine's config object: `machine.provide(...)` keeps it, so provided copies
// of a jr2 Machine share their walk.
const models = new WeakMap<object, MachineModel>();

/** Records the walk of a Machine (called once by jr2Setup's createMachine). */
export function registerModel(machine: AnyStateMachine, model: MachineModel): void {
  models.set(machine.config, model);
}

/** The walk of a jr2 Machine, or `undefined` for any other logic. */
export function modelOf(machine: unknown): MachineModel | undefined {
  const config = (machine as { config?: unknown } | null | undefined)?.config;
  return typeof config === "object" && config !== null ? models.get(config) : undefined;
}
