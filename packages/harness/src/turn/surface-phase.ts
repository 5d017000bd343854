import type { Tool } from "@jr2/wire";
import type { TurnDeps } from "./turn-deps.js";

/** The surface read before the model: the Allowed picks and the Menu, or how the Submission settles. */
export type SurfacePhase =
  | { kind: "ready"; allowed: string[]; menu: Tool[] }
  | { kind: "settle"; outcome: "aborted" | "failed"; error?: { type: string; message: string } };

/** Phase 1: the surface, before touching the model. 404 → the Turn is over → aborted. */
export async function readSurfacePhase(
  iid: string,
  deps: TurnDeps,
  signal: AbortSignal,
): Promise<SurfacePhase> {
  const r = await deps.orchestrator.readSurface(iid, { budgetMs: deps.surfaceBudgetMs, signal });
  if (r.kind === "gone") return { kind: "settle", outcome: "aborted" };
  if (r.kind === "failed") {
    return signal.aborted
      ? { kind: "settle", outcome: "aborted" }
      : { kind: "settle", outcome: "failed", error: { type: "surface", message: r.message } };
  }
  return { kind: "ready", allowed: r.surface.allowed, menu: r.surface.menu };
}
