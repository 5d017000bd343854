/**
 * Random small Machines for the property test, as plain serializable specs (so a fresh
 * process can rebuild the same Machine), plus an oracle computed from the spec alone —
 * never from xstate's selection or jr2's readings.
 */
import fc from "fast-check";
import { z } from "zod";
import { agent, defineEvent, jr2Setup } from "../../src/index.js";

export const NAMES = ["alpha", "Beta", "gamma", "delta_1", "eps-2"] as const;
export type Name = (typeof NAMES)[number];
/** How one writing is made: unguarded, inert `X: {}`, or guarded in one of four ways. */
export const KINDS = ["plain", "inert", "guardTrue", "guardFalse", "readsPayload", "throws"] as const;
export type Kind = (typeof KINDS)[number];

export interface StateSpec {
  parallel: boolean;
  invoke: "agent" | "gate" | null;
  on: Array<[Name, Kind]>;
  children: StateSpec[];
  initial: number;
}

const stateArb = (depth: number): fc.Arbitrary<StateSpec> =>
  fc.record({
    parallel: fc.boolean(),
    invoke: fc.constantFrom<StateSpec["invoke"]>(null, null, "agent", "gate"),
    on: fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom(...KINDS)), {
      selector: (t) => t[0],
      maxLength: 3,
    }),
    children: depth > 0 ? fc.array(stateArb(depth - 1), { maxLength: 3 }) : fc.constant([]),
    initial: fc.nat(5),
  });

/** A root whose own writings are random but which invokes nothing (the run root). */
export const machineSpecArb: fc.Arbitrary<StateSpec> = fc
  .record({ root: stateArb(3), children: fc.array(stateArb(2), { minLength: 1, maxLength: 3 }) })
  .map(({ root, children }) => ({ ...root, invoke: null, children }));

const writingOf = (kind: Kind): unknown => {
  switch (kind) {
    case "plain":
      return { actions: "noop" };
    case "inert":
      return {};
    case "guardTrue":
      return { guard: () => true, actions: "noop" };
    case "guardFalse":
      return { guard: () => false, actions: "noop" };
    case "readsPayload":
      return { guard: ({ event }: { event: { x?: number } }) => event.x === 1, actions: "noop" };
    case "throws":
      return {
        guard: () => {
          throw new Error("guard bug");
        },
        actions: "noop",
      };
  }
};

type Obj = Record<string, unknown>;

function configOf(spec: StateSpec, reverse: boolean, isRoot: boolean): Obj {
  const entries: Array<[string, unknown]> = spec.on.map(([name, kind]) => [name, writingOf(kind)]);
  if (isRoot) entries.push(["agent.fault", {}]);
  const on = Object.fromEntries(reverse ? entries.reverse() : entries);
  const config: Obj = { on };
  if (spec.invoke === "agent") config.invoke = { src: "coder", input: { prompt: "p" } };
  if (spec.invoke === "gate") config.invoke = { src: "gate" };
  if (spec.children.length) {
    const keys = spec.children.map((_, i) => `s${i}`);
    const states = spec.children.map((c, i) => [keys[i]!, configOf(c, reverse, false)] as const);
    config.states = Object.fromEntries(reverse ? [...states].reverse() : states);
    if (spec.parallel) config.type = "parallel";
    else config.initial = keys[spec.initial % keys.length];
  }
  return config;
}

/** Builds the spec's Machine (id `m`); `reverse` declares events and keys in reverse order. */
export function buildMachine(spec: StateSpec, reverse = false) {
  const events = NAMES.map((name) =>
    defineEvent({ name, description: `Pick ${name}.`, input: z.object({ x: z.number().optional() }) }),
  );
  return jr2Setup({
    events: reverse ? [...events].reverse() : events,
    actors: { coder: agent({ model: "m", instructions: "i" }) },
    actions: { noop: () => {} },
  }).createMachine({ id: "m", ...configOf(spec, reverse, true) } as never);
}

// ── The oracle ──────────────────────────────────────────────────────────────────────────────

export interface Node {
  spec: StateSpec;
  path: string[];
  parent: Node | undefined;
  children: Node[];
}

export function nodesOf(spec: StateSpec): Node[] {
  const out: Node[] = [];
  const visit = (s: StateSpec, path: string[], parent: Node | undefined) => {
    const node: Node = { spec: s, path, parent, children: [] };
    out.push(node);
    parent?.children.push(node);
    for (const [i, c] of s.children.entries()) visit(c, [...path, `s${i}`], node);
  };
  visit(spec, [], undefined);
  return out;
}

export function activeNodes(root: Node): Node[] {
  const out: Node[] = [root];
  const { children } = root;
  if (!children.length) return out;
  const on = root.spec.parallel ? children : [children[root.spec.initial % children.length]!];
  return out.concat(on.flatMap(activeNodes));
}

const isPrefix = (a: string[], b: string[]) => a.length <= b.length && a.every((k, i) => b[i] === k);
const seatOf = (n: Node): Node | undefined => (n.spec.invoke ? n : n.parent ? seatOf(n.parent) : undefined);

/** Is a writing on `source` the seat's? Its ancestors-or-self, or its modes. */
export function isSeats(source: Node, seat: Node): boolean {
  if (isPrefix(source.path, seat.path)) return true;
  return isPrefix(seat.path, source.path) && seatOf(source) === seat;
}

/** The derived set of a seat, sorted by code units. */
export function derivedSetOf(seat: Node, all: Node[]): string[] {
  const writers = all.filter(
    (n) => isPrefix(n.path, seat.path) || (n !== seat && isPrefix(seat.path, n.path) && seatOf(n) === seat),
  );
  const names = new Set(writers.flatMap((n) => n.spec.on.map(([name]) => name)));
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

const passesBlind = (kind: Kind) => kind !== "guardFalse";

/** The Allowed picks of the Turn at `seat` per §3.4/§3.5, from the spec alone. */
export function oracleAllowed(seat: Node, all: Node[], active: Node[]): string[] {
  const busy = active.some((n) => n !== seat && n.spec.invoke !== null && isPrefix(seat.path, n.path));
  if (busy) return [];
  // xstate 5.33's getTransitionData: a compound node defers to its active child, a parallel
  // node to the union of its regions; a node's own writing is considered only when nothing
  // below it selected anything.
  const select = (node: Node, name: string): Array<[Node, Kind]> => {
    const writing = node.spec.on.find(([n]) => n === name);
    const own: Array<[Node, Kind]> = writing && passesBlind(writing[1]) ? [[node, writing[1]]] : [];
    if (!node.children.length) return own;
    const below = node.spec.parallel
      ? node.children.flatMap((c) => select(c, name))
      : select(node.children[node.spec.initial % node.children.length]!, name);
    return below.length ? below : own;
  };
  return derivedSetOf(seat, all).filter((name) => {
    const selected = new Map<Node, Kind>(select(all[0]!, name));
    if (!selected.size) return false;
    if (![...selected.values()].some((k) => k !== "inert")) return false;
    return [...selected.keys()].every((source) => isSeats(source, seat));
  });
}
