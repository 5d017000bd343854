/**
 * `GET /workflows/:name/chart` (open, like the Menu): each Machine of a workflow as nodes and
 * edges for the web console's state chart (issue 12). Read from the Machine's state nodes
 * through the xstate adapter; a pure walk, computed once per workflow.
 * @see SPEC §3.1; docs/adr/0451-console-serving-and-auth.md
 */
import { type ChartEdge, type ChartNode, Jr2Error, MachineChart } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { machineInfoOf } from "../menu/menu.js";
import type { WorkflowTable } from "../runs/run-host.js";
import { rootOf, type StateNodeLike, type TransitionLike } from "../xstate/adapter.js";
import { errorResponses } from "./routes/error-responses.js";

/** What a state node carries beyond {@link StateNodeLike}: its initial transition and eventless ones. */
interface ChartExtras {
  initial?: { target?: readonly StateNodeLike[] };
  always?: readonly TransitionLike[];
}

const pathOf = (node: StateNodeLike): string => node.path.join(".");

const srcName = (src: unknown): string =>
  typeof src === "string" ? src : ((src as { id?: string } | null)?.id ?? "(inline)");

/** The nodes and edges of one Machine, depth first, in authored order. */
export function chartOfMachine(root: StateNodeLike): { nodes: ChartNode[]; edges: ChartEdge[] } {
  const nodes: ChartNode[] = [];
  const edges: ChartEdge[] = [];
  const visit = (node: StateNodeLike, initialKey: string | undefined): void => {
    nodes.push({
      path: pathOf(node),
      parent: node.parent ? pathOf(node.parent) : null,
      key: node.key,
      type: node.type,
      initial: initialKey === node.key,
      invokes: node.invoke.map((i) => srcName(i.src)),
    });
    const extras = node as unknown as ChartExtras;
    const all = [...[...node.transitions.values()].flat(), ...(extras.always ?? [])];
    for (const t of all)
      for (const target of t.target ?? [])
        edges.push({ from: pathOf(node), to: pathOf(target), event: t.eventType, guarded: Boolean(t.guard) });
    const childInitial = extras.initial?.target?.[0]?.key;
    for (const child of Object.values(node.states)) visit(child, childInitial);
  };
  visit(root, undefined);
  return { nodes, edges };
}

/** The chart of every Machine of `workflow` (the root first, then each it invokes). */
export function workflowChart(workflows: WorkflowTable, workflow: string): MachineChart {
  const machine = workflows.get(workflow);
  if (!machine) throw new Jr2Error("JR2_ERR_WORKFLOW_NOT_FOUND", { workflow, known: [...workflows.keys()] });
  return {
    machines: machineInfoOf(machine).machines.map(({ path, machine: m }) => ({
      path,
      id: m.id,
      ...chartOfMachine(rootOf(m)),
    })),
  };
}

/** Registers `GET /workflows/:name/chart` over the served workflows. */
export const machineChartRoute: FastifyPluginAsyncZod<{ workflows: WorkflowTable }> = async (
  app,
  { workflows },
) => {
  const cache = new Map<string, MachineChart>();
  app.get(
    "/workflows/:name/chart",
    {
      schema: {
        summary: "Each Machine of a workflow as state nodes and transitions (the console's state chart)",
        params: z.object({ name: z.string().min(1).max(200) }),
        response: { 200: MachineChart, ...errorResponses(404) },
      },
      config: { auth: "open" },
    },
    async (request) => {
      const name = request.params.name;
      const hit = cache.get(name) ?? workflowChart(workflows, name);
      cache.set(name, hit);
      return hit;
    },
  );
};
