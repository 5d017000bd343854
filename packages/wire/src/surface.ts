import { z } from "zod";
import { Tool } from "./tool.js";

/**
 * `GET /agents/:iid/surface`: the Menu (byte-stable, the tools block) and the Allowed picks
 * (read now), for the live Turn at `iid`.
 * @see SPEC §4.2
 */
export const Surface = z.object({
  iid: z.string(),
  runId: z.string(),
  agent: z.string(),
  turnId: z.string().nullable(),
  menu: z.array(Tool),
  allowed: z.array(z.string()),
});
export type Surface = z.infer<typeof Surface>;

/** The pre-Menu surface an older Orchestrator serves: its narrowed list only (§7.6). */
export const LegacySurface = z.looseObject({ tools: z.array(Tool) });
export type LegacySurface = z.infer<typeof LegacySurface>;

/**
 * A surface as the Harness reads it, whatever the Orchestrator's version.
 * `source: "legacy"` marks the pre-Menu form, whose tools are both the tools block and the
 * Allowed picks.
 */
export interface TolerantSurface {
  menu: Tool[];
  allowed: string[];
  turnId: string | null;
  source: "menu" | "legacy";
}

/**
 * Reads a surface tolerantly (§7.6): a body with `menu` is today's form (a missing `allowed`
 * is read as every Menu name — absent is not empty); a body with only `tools` is the pre-Menu
 * form. Extra fields are ignored.
 * @returns the surface, or `undefined` when the body is neither form.
 */
export function readSurface(body: unknown): TolerantSurface | undefined {
  const current = z
    .looseObject({
      menu: z.array(Tool),
      allowed: z.array(z.string()).optional(),
      turnId: z.string().nullable().optional(),
    })
    .safeParse(body);
  if (current.success) {
    const { menu, allowed, turnId } = current.data;
    return { menu, allowed: allowed ?? menu.map((t) => t.name), turnId: turnId ?? null, source: "menu" };
  }
  const legacy = LegacySurface.safeParse(body);
  if (legacy.success) {
    const tools = legacy.data.tools;
    const turnId = typeof legacy.data.turnId === "string" ? legacy.data.turnId : null;
    return { menu: tools, allowed: tools.map((t) => t.name), turnId, source: "legacy" };
  }
  return undefined;
}
