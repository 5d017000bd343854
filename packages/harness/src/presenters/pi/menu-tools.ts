import type { Tool } from "@jr2/wire";
import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import { type Tool as PiTool, Type } from "@mariozechner/pi-ai";

/**
 * The pi presenter (§7.2, ADR-0029): maps Menu items and Working tools to pi `AgentTool`s and
 * places the texts menu.ts writes. pi registers every tool with a permissive schema so its own
 * validation never answers (the Orchestrator is the single validation path for picks); the
 * request presents the real schemas, via {@link presentedTools} in the streamFn wrapper.
 * @see docs/adr/0151-pi-interception.md
 */

/** What a wrapped tool call asks the engine to do. */
export type ToolCallKind = { kind: "menu"; item: Tool } | { kind: "working"; tool: AgentTool };

/** The engine's handler for one tool call; returns the text the model reads. */
export type ToolDispatch = (
  call: { toolCallId: string; name: string; args: unknown; signal: AbortSignal | undefined },
  target: ToolCallKind,
) => Promise<ToolOutcome>;

/** A tool's outcome: text for the model, and whether pi's loop must end after this batch. */
export interface ToolOutcome {
  text: string;
  terminate?: boolean;
  /** Working tool details kept for observers (never shown to the model). */
  details?: unknown;
}

/** Marks results written by jr2, so a result without it is one of pi's own (intercepted). */
export const JR2_RESULT = "jr2";

/** True when a tool result came from a jr2 wrapper (not pi's unknown-tool / validation path). */
export function isJr2Result(result: AgentToolResult<unknown>): boolean {
  const d = result.details as Record<string, unknown> | undefined;
  return typeof d === "object" && d !== null && d[JR2_RESULT] === true;
}

/** Builds a jr2 result. */
export function jr2Result(outcome: ToolOutcome): AgentToolResult<unknown> {
  return {
    content: [{ type: "text", text: outcome.text }],
    details: { [JR2_RESULT]: true, inner: outcome.details },
    ...(outcome.terminate ? { terminate: true } : {}),
  };
}

const PERMISSIVE = Type.Any();

/** pi tools: Working tools first, then the Menu in Menu order (§7.2 step 2). */
export function piTools(
  working: readonly AgentTool[],
  menu: readonly Tool[],
  dispatch: ToolDispatch,
): AgentTool[] {
  const wrap = (name: string, description: string, target: ToolCallKind): AgentTool => ({
    name,
    label: name,
    description,
    parameters: PERMISSIVE,
    executionMode: "sequential",
    execute: async (toolCallId, args, signal) =>
      jr2Result(await dispatch({ toolCallId, name, args, signal }, target)),
  });
  return [
    ...working.map((t) => wrap(t.name, t.description, { kind: "working", tool: t })),
    ...menu.map((item) => wrap(item.name, item.description, { kind: "menu", item })),
  ];
}

/** The tools block as the model sees it: same order, real schemas, Menu bytes verbatim. */
export function presentedTools(working: readonly AgentTool[], menu: readonly Tool[]): PiTool[] {
  return [
    ...working.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    ...menu.map((item) => ({
      name: item.name,
      description: item.description,
      parameters: item.parameters as never,
    })),
  ];
}
