import { z } from "zod";

/**
 * `GET /workflows/:name/chart` (issue 12): each Machine of a workflow as a graph a console can
 * lay out — its state nodes (flat, each naming its parent) and its transitions. Only the
 * Machine's shape: no guards' code, no context.
 * @see SPEC §3.1; docs/adr/0451-console-serving-and-auth.md
 */

/** A state node: `path` is its dot path from the Machine's root (`""` for the root itself). */
export const ChartNode = z.object({
  path: z.string(),
  /** The parent's path; null for the root. */
  parent: z.string().nullable(),
  key: z.string(),
  type: z.enum(["atomic", "compound", "parallel", "final", "history"]),
  /** True when it is its parent's initial state. */
  initial: z.boolean(),
  /** The `src` of each actor the state invokes (an Agent's name, `gate`, a workspace). */
  invokes: z.array(z.string()),
});
export type ChartNode = z.infer<typeof ChartNode>;

/** A transition: `event` is the event type (xstate's `xstate.done.actor.*`, `xstate.after.*` included; `""` for an eventless one). */
export const ChartEdge = z.object({
  from: z.string(),
  to: z.string(),
  event: z.string(),
  guarded: z.boolean(),
});
export type ChartEdge = z.infer<typeof ChartEdge>;

/** The answer: one entry per Machine, the root (path `""`) first, as `GET /workflows/:name/menu` lists them. */
export const MachineChart = z.object({
  machines: z.array(
    z.object({ path: z.string(), id: z.string(), nodes: z.array(ChartNode), edges: z.array(ChartEdge) }),
  ),
});
export type MachineChart = z.infer<typeof MachineChart>;
