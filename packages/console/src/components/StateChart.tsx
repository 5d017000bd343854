/**
 * A Machine as a state chart (issue 12): laid out by elkjs (layered, compound states holding
 * their children) and drawn as SVG; the active states are highlighted. elk's bundled build runs
 * in this thread (no Worker, no eval: ADR-0450). Labels are text nodes.
 */
import type { MachineChart } from "@jr2/wire";
import type { ELK as ElkApi, ElkExtendedEdge, ElkNode } from "elkjs/lib/elk-api.js";
import { useEffect, useState } from "react";
import { shortEvent } from "../chart-model.js";

type ChartMachine = MachineChart["machines"][number];

/**
 * ELK (~1.5 MB of the bundle) is its own chunk, loaded the first time a chart is drawn: the runs
 * list does not wait for it. A same-origin module file, so `script-src 'self'` allows it.
 */
let elk: Promise<ElkApi> | undefined;
const loadElk = (): Promise<ElkApi> =>
  (elk ??= import("elkjs/lib/elk.bundled.js").then((m) => new m.default()));
const CHAR = 7;

const nodeId = (path: string) => `n:${path}`;

/** The elk graph of one Machine: compound nodes nest, every edge at the root (ROOT coordinates). */
function elkGraph(machine: ChartMachine): ElkNode {
  const byPath = new Map<string, ElkNode>();
  for (const n of machine.nodes) {
    const label = n.path === "" ? machine.id : n.key;
    byPath.set(n.path, {
      id: nodeId(n.path),
      width: Math.max(60, label.length * CHAR + 24),
      height: 30,
      labels: [{ text: label }],
      children: [],
      layoutOptions: { "elk.padding": "[top=30,left=12,bottom=12,right=12]" },
    });
  }
  for (const n of machine.nodes)
    if (n.parent !== null) byPath.get(n.parent)?.children?.push(byPath.get(n.path) as ElkNode);
  const edges: ElkExtendedEdge[] = machine.edges.map((e, i) => ({
    id: `e${i}`,
    sources: [nodeId(e.from)],
    targets: [nodeId(e.to)],
    labels: [{ text: shortEvent(e.event), width: shortEvent(e.event).length * 6 + 4, height: 12 }],
  }));
  const root = byPath.get("") as ElkNode;
  return {
    id: "graph",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.hierarchyHandling": "INCLUDE_CHILDREN",
      "elk.json.edgeCoords": "ROOT",
      "elk.layered.spacing.nodeNodeBetweenLayers": "40",
      "elk.edgeLabels.placement": "CENTER",
    },
    children: [root],
    edges,
  };
}

interface Placed {
  path: string;
  label: string;
  x: number;
  y: number;
  w: number;
  h: number;
  compound: boolean;
  final: boolean;
}

function place(node: ElkNode, dx: number, dy: number, out: Placed[], machine: ChartMachine): void {
  for (const child of node.children ?? []) {
    const path = child.id.slice(2);
    const info = machine.nodes.find((n) => n.path === path);
    const x = dx + (child.x ?? 0);
    const y = dy + (child.y ?? 0);
    out.push({
      path,
      label: child.labels?.[0]?.text ?? path,
      x,
      y,
      w: child.width ?? 0,
      h: child.height ?? 0,
      compound: (child.children?.length ?? 0) > 0,
      final: info?.type === "final",
    });
    place(child, x, y, out, machine);
  }
}

/** One Machine's chart; `active`: the dot paths of its active states. */
export function StateChart({ machine, active }: { machine: ChartMachine; active: ReadonlySet<string> }) {
  const [layout, setLayout] = useState<ElkNode | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    loadElk()
      .then((e) => e.layout(elkGraph(machine)))
      .then((g) => live && setLayout(g))
      .catch((e: unknown) => live && setError(String(e)));
    return () => {
      live = false;
    };
  }, [machine]);
  if (error) return <p className="error">The chart could not be laid out: {error}</p>;
  if (!layout) return <p className="muted">Laying out…</p>;
  const placed: Placed[] = [];
  place(layout, 0, 0, placed, machine);
  return (
    <svg
      className="chart"
      width={(layout.width ?? 0) + 4}
      height={(layout.height ?? 0) + 4}
      role="img"
      aria-label={`state chart of ${machine.id}`}
    >
      <defs>
        <marker
          id="arrow"
          viewBox="0 0 10 10"
          refX="9"
          refY="5"
          markerWidth="7"
          markerHeight="7"
          orient="auto"
        >
          <path d="M0,0 L10,5 L0,10 z" className="arrowhead" />
        </marker>
      </defs>
      {placed.map((p) => (
        <g
          key={p.path}
          className={`state${p.compound ? " compound" : ""}${p.final ? " final" : ""}${active.has(p.path) ? " active" : ""}`}
          data-state={p.path}
        >
          <rect x={p.x + 2} y={p.y + 2} width={p.w} height={p.h} rx={6} />
          <text x={p.x + 10} y={p.y + (p.compound ? 18 : p.h / 2 + 6)}>
            {p.label}
          </text>
        </g>
      ))}
      {(layout.edges ?? []).map((e) =>
        (e as ElkExtendedEdge).sections?.map((s) => {
          const pts = [s.startPoint, ...(s.bendPoints ?? []), s.endPoint];
          const label = (e as ElkExtendedEdge).labels?.[0];
          return (
            <g key={`${e.id}${s.id}`} className="edge">
              <polyline points={pts.map((p) => `${p.x + 2},${p.y + 2}`).join(" ")} markerEnd="url(#arrow)" />
              {label ? (
                <text x={(label.x ?? 0) + 2} y={(label.y ?? 0) + 12}>
                  {label.text}
                </text>
              ) : null}
            </g>
          );
        }),
      )}
    </svg>
  );
}
