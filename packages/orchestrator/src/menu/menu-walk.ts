/**
 * The walk at createMachine (§3.2): one deterministic pass over a Machine's state tree that
 * refuses what cannot work, finds every state invoking an Agent or a Gate, derives each one's
 * set of names, records who owns each writing, and fixes each Agent's Menu (§3.3).
 * Pure: a function of the built Machine and its setup; it returns data or throws a coded error.
 * @see SPEC §3.2, §3.3
 */
import { createHash } from "node:crypto";
import { type AgentDefinition, Jr2Error, type Tool } from "@jr2/wire";
import type { AnyStateMachine } from "xstate";
import { z } from "zod";
import { rootOf, type StateNodeLike } from "../xstate/adapter.js";
import { type EventDef, isAgentAudience, isGateAudience } from "./event-def.js";
import {
  type InvokingState,
  type MachineInfo,
  type MachineModel,
  type MachineWarning,
  modelOf,
  type WalkContext,
} from "./machine-model.js";
import { agentDefinitionOf, isGateLogic, workspaceBodyOf } from "./marks.js";
import { outcomeWarnings } from "./outcomes.js";

export type {
  InvokingState,
  MachineInfo,
  MachineModel,
  MachineWarning,
  WalkContext,
} from "./machine-model.js";

type Party =
  | { kind: "agent"; name: string }
  | { kind: "gate"; invokeId: string; authored: boolean }
  | { kind: "machine"; invokeId: string; machine: AnyStateMachine; body: boolean }
  | { kind: "other" };

/** Sorts names by UTF-16 code units — never `localeCompare`, whose order depends on ICU. */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const isMechanism = (key: string) => key.includes(".");
const statePathOf = (node: StateNodeLike) => node.path.join(".");

function nodesInOrder(root: StateNodeLike): StateNodeLike[] {
  const out: StateNodeLike[] = [];
  const visit = (n: StateNodeLike) => {
    out.push(n);
    for (const child of Object.values(n.states)) visit(child);
  };
  visit(root);
  return out;
}

function ancestorsOrSelf(node: StateNodeLike): StateNodeLike[] {
  const out: StateNodeLike[] = [];
  for (let at: StateNodeLike | undefined = node; at; at = at.parent) out.push(at);
  return out;
}

function partiesOf(node: StateNodeLike, ctx: WalkContext, authoredIds: ReadonlySet<string>): Party[] {
  return node.invoke.map((inv): Party => {
    const logic = typeof inv.src === "string" ? (inv.src === "gate" ? "gate" : ctx.actors[inv.src]) : inv.src;
    if (logic === "gate" || isGateLogic(logic)) {
      return { kind: "gate", invokeId: inv.id, authored: authoredIds.has(inv.id) };
    }
    if (agentDefinitionOf(logic)) {
      if (typeof inv.src !== "string") {
        throw new Jr2Error("JR2_ERR_SETUP_AGENT_INVALID", {
          detail: `state \`${statePathOf(node)}\` invokes an inline agent(); put it in jr2Setup({ actors: { <name>: agent(...) } }) and invoke it by name`,
        });
      }
      return { kind: "agent", name: inv.src };
    }
    const body = workspaceBodyOf(logic);
    if (body) return { kind: "machine", invokeId: inv.id, machine: body, body: true };
    if (logic && typeof logic === "object" && modelOf(logic as AnyStateMachine)) {
      return { kind: "machine", invokeId: inv.id, machine: logic as AnyStateMachine, body: false };
    }
    return { kind: "other" };
  });
}

function describeParty(p: Party): string {
  return p.kind === "agent" ? `Agent \`${p.name}\`` : p.kind === "gate" ? `Gate \`${p.invokeId}\`` : p.kind;
}

/**
 * Walks a built Machine.
 * @throws Jr2Error `JR2_ERR_SETUP_EVENT_UNKNOWN`, `JR2_ERR_SETUP_INVOKE_CONFLICT`,
 *   `JR2_ERR_SETUP_AGENT_FAULT_UNROUTED`, `JR2_ERR_SETUP_AGENT_INVALID`,
 *   `JR2_ERR_SETUP_OUTCOME_INVALID` (a top-level final state's `meta.outcome`, ADR-0062)
 * @see SPEC §3.1 (refusals), §3.2, §3.3
 */
export function walkMachine(
  machine: AnyStateMachine,
  ctx: WalkContext,
  authoredIds: ReadonlySet<string>,
): MachineModel {
  const nodes = nodesInOrder(rootOf(machine));
  const declared = [...ctx.defs.keys()].sort(byCodeUnits);
  const parties = new Map<string, Party[]>();
  const ownerOf = new Map<string, string | null>();

  for (const node of nodes) {
    for (const key of node.transitions.keys()) {
      if (!isMechanism(key) && !ctx.defs.has(key)) {
        throw new Jr2Error("JR2_ERR_SETUP_EVENT_UNKNOWN", {
          key,
          state: statePathOf(node) || "(root)",
          declared,
        });
      }
    }
    const own = partiesOf(node, ctx, authoredIds);
    parties.set(node.id, own);
    const seats = own.filter((p) => p.kind === "agent" || p.kind === "gate");
    if (seats.length > 1) {
      throw new Jr2Error("JR2_ERR_SETUP_INVOKE_CONFLICT", {
        state: statePathOf(node) || "(root)",
        parties: seats.map(describeParty).join(" and "),
      });
    }
    ownerOf.set(node.id, seats.length ? node.id : node.parent ? (ownerOf.get(node.parent.id) ?? null) : null);
  }

  const namesOf = (seat: StateNodeLike, keep: (def: EventDef) => boolean): string[] => {
    const names = new Set<string>();
    const writers = [
      ...ancestorsOrSelf(seat),
      ...nodes.filter((n) => n !== seat && ownerOf.get(n.id) === seat.id),
    ];
    for (const n of writers) {
      for (const key of n.transitions.keys()) {
        const def = ctx.defs.get(key);
        if (def && keep(def)) names.add(key);
      }
    }
    return [...names].sort(byCodeUnits);
  };

  const agentStates = new Map<string, InvokingState>();
  const gateStates = new Map<string, InvokingState>();
  for (const node of nodes) {
    for (const party of parties.get(node.id) ?? []) {
      const statePath = statePathOf(node);
      if (party.kind === "agent") {
        if (!ancestorsOrSelf(node).some((n) => n.transitions.has("agent.fault"))) {
          throw new Jr2Error("JR2_ERR_SETUP_AGENT_FAULT_UNROUTED", {
            state: statePath || "(root)",
            agent: party.name,
          });
        }
        agentStates.set(`${party.name}\u0000${statePath}`, {
          node,
          statePath,
          party,
          names: namesOf(node, isAgentAudience),
        });
      } else if (party.kind === "gate") {
        gateStates.set(party.invokeId, { node, statePath, party, names: namesOf(node, isGateAudience) });
      }
    }
  }

  const toolOf = (name: string): Tool => {
    const def = ctx.defs.get(name)!;
    return Object.freeze({ name, description: def.description, parameters: def.parameters });
  };
  const menus = new Map<string, readonly Tool[]>();
  const agents: MachineInfo["agents"] = {};
  for (const seat of agentStates.values()) {
    const { name } = seat.party as { name: string };
    const entry = agents[name] ?? { definition: wireDefinition(ctx.actors[name]), menu: [], states: {} };
    agents[name] = entry;
    entry.states[seat.statePath] = [...seat.names];
  }
  for (const [name, entry] of Object.entries(agents)) {
    const union = new Set(Object.values(entry.states).flat());
    entry.menu = Object.freeze([...union].sort(byCodeUnits).map(toolOf)) as Tool[];
    menus.set(name, entry.menu);
  }
  const gates: MachineInfo["gates"] = {};
  for (const seat of gateStates.values()) {
    const p = seat.party as { invokeId: string; authored: boolean };
    gates[p.authored ? p.invokeId : seat.statePath] = { accepts: seat.names.map(toolOf) };
  }

  const machines: MachineInfo["machines"] = [{ path: "", machine }];
  for (const node of nodes) {
    for (const p of parties.get(node.id) ?? []) {
      if (p.kind !== "machine") continue;
      const base = p.body ? `${p.invokeId}/body` : p.invokeId;
      for (const nested of modelOf(p.machine)?.info.machines ?? []) {
        machines.push({ path: nested.path ? `${base}/${nested.path}` : base, machine: nested.machine });
      }
    }
  }

  const info: MachineInfo = {
    id: machine.id,
    inputSchema: ctx.input,
    inputJsonSchema: ctx.input ? (z.toJSONSchema(ctx.input) as Record<string, unknown>) : null,
    agents,
    gates,
    machines,
    events: new Map(ctx.defs),
    warnings: [
      ...divergenceWarnings(agentStates, ownerOf, nodes),
      ...outcomeWarnings(rootOf(machine), nodes),
    ],
    fingerprint: fingerprintOf(nodes, ctx, menus),
  };
  return { info, ownerOf, agentStates, gateStates, menus };
}

function wireDefinition(logic: unknown): AgentDefinition {
  const d = agentDefinitionOf(logic)!;
  return {
    model: d.model,
    instructions: d.instructions,
    workspace: d.workspace,
    ...(d.thinkingLevel ? { thinkingLevel: d.thinkingLevel } : {}),
  };
}

/** How a writing acts: its targets and its actions (not where it is written). */
function effectOf(node: StateNodeLike, name: string): string {
  return JSON.stringify(
    (node.transitions.get(name) ?? []).map((t) => ({
      target: (t.target ?? []).map((n) => n.id),
      actions: t.actions.map((a) =>
        typeof a === "string" ? a : ((a as { type?: string })?.type ?? "inline"),
      ),
      guarded: t.guard !== undefined,
    })),
  );
}

/** §3.2: warn where one name's writings differ across the states one Agent's conversation reaches. */
function divergenceWarnings(
  agentStates: ReadonlyMap<string, InvokingState>,
  ownerOf: ReadonlyMap<string, string | null>,
  nodes: readonly StateNodeLike[],
): MachineWarning[] {
  const effects = new Map<string, Map<string, string[]>>(); // `${agent}\0${name}` → effect → states
  for (const seat of agentStates.values()) {
    const agentName = (seat.party as { name: string }).name;
    const writers = [
      ...ancestorsOrSelf(seat.node),
      ...nodes.filter((n) => n !== seat.node && ownerOf.get(n.id) === seat.node.id),
    ];
    for (const name of seat.names) {
      const effect = writers
        .filter((n) => n.transitions.has(name))
        .map((n) => effectOf(n, name))
        .join("|");
      const byEffect = effects.get(`${agentName}\u0000${name}`) ?? new Map<string, string[]>();
      byEffect.set(effect, [...(byEffect.get(effect) ?? []), seat.statePath || "(root)"]);
      effects.set(`${agentName}\u0000${name}`, byEffect);
    }
  }
  const warnings: MachineWarning[] = [];
  for (const [key, byEffect] of effects) {
    if (byEffect.size < 2) continue;
    const [agentName, name] = key.split("\u0000");
    const states = [...byEffect.values()].map((s) => s.join(", ")).join(" vs ");
    warnings.push({
      code: "JR2_WARN_MENU_WRITINGS_DIFFER",
      message: `\`${name}\` of Agent \`${agentName}\` is written differently across its states (${states}); its Menu carries one description — make sure it holds at each`,
    });
  }
  return warnings;
}

function fingerprintOf(
  nodes: readonly StateNodeLike[],
  ctx: WalkContext,
  menus: ReadonlyMap<string, readonly Tool[]>,
): string {
  const shape = nodes.map((n) => ({
    id: n.id,
    type: n.type,
    invoke: n.invoke.map((i) => ({ src: typeof i.src === "string" ? i.src : "inline", id: i.id })),
    on: [...n.transitions.entries()].map(([key, ts]) => [
      key,
      ts.map((t, i) => ({
        target: (t.target ?? []).map((x) => x.id),
        guard: ctx.guardNames.get(`${statePathOf(n)}#${key}#${i}`) ?? null,
      })),
    ]),
  }));
  const menuBytes = [...menus.keys()].sort(byCodeUnits).map((k) => [k, menus.get(k)]);
  return createHash("sha256").update(JSON.stringify({ shape, menuBytes })).digest("hex");
}
