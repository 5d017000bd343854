import { type AgentDefinition, Jr2Error, type McpServers, ThinkingLevel, WorkspaceAccess } from "@jr2/wire";
import { type CallbackActorLogic, type EventObject, fromCallback } from "xstate";
import { markAgentLogic } from "../menu/marks.js";
import { recordTurnBaseline } from "../menu/rest.js";
import { runBindingOf, type TurnInput } from "../xstate/run-binding.js";
import { checkAgentMcp } from "./agent-mcp.js";

/** What an author passes to {@link agent}: the Agent's identity, plain data. */
export interface AgentInit {
  model: string;
  instructions: string;
  /** Working tools by access (§7.2); default `"none"` — least privilege. */
  workspace?: WorkspaceAccess;
  thinkingLevel?: ThinkingLevel;
  description?: string;
  /**
   * MCP servers whose tools the Agent gets (issue 29): `{ fs: { command, args }, gh: { url,
   * headers: { Authorization: { secret: "GH_TOKEN" } } } }`; `required: true` on a server
   * faults the Turn (`mcp-unavailable`) when it is down as the conversation starts.
   */
  mcp?: McpServers;
}

/** The Agent slot's actor logic: a callback actor whose input is the finalized {@link TurnInput}. */
export type AgentLogic = CallbackActorLogic<EventObject, TurnInput>;

/**
 * Declares an Agent: a persona carried as an actor slot (`actors: { coder: agent({...}) }`;
 * the slot key is its name). Its body hands the Turn to the run host bound to the actor
 * system (`startTurn`) and ends it when the invoking state exits; with no run host bound (a
 * unit test) the Turn is inert.
 * @throws Jr2Error `JR2_ERR_SETUP_AGENT_INVALID` naming the bad field; the `mcp` block's
 *   codes from {@link checkAgentMcp}
 * @see SPEC §3.1, §5.1
 * @example agent({ model: "qwen3", instructions: "You review diffs.", workspace: "read" })
 */
export function agent(init: AgentInit): AgentLogic {
  if (typeof init?.model !== "string" || init.model.length === 0) {
    throw new Jr2Error("JR2_ERR_SETUP_AGENT_INVALID", { detail: "`model` must be a non-empty string" });
  }
  if (typeof init.instructions !== "string") {
    throw new Jr2Error("JR2_ERR_SETUP_AGENT_INVALID", { detail: "`instructions` must be a string" });
  }
  const workspace = WorkspaceAccess.safeParse(init.workspace ?? "none");
  if (!workspace.success) {
    throw new Jr2Error("JR2_ERR_SETUP_AGENT_INVALID", {
      detail: `workspace \`${String(init.workspace)}\`; accepted: none, read, write`,
    });
  }
  const thinking = ThinkingLevel.optional().safeParse(init.thinkingLevel);
  if (!thinking.success) {
    throw new Jr2Error("JR2_ERR_SETUP_AGENT_INVALID", {
      detail: `thinkingLevel \`${String(init.thinkingLevel)}\`; accepted: ${ThinkingLevel.options.join(", ")}`,
    });
  }
  const mcp = checkAgentMcp(init.mcp);
  const definition: AgentDefinition & { description?: string } = Object.freeze({
    model: init.model,
    instructions: init.instructions,
    workspace: workspace.data,
    ...(thinking.data ? { thinkingLevel: thinking.data } : {}),
    ...(init.description !== undefined ? { description: init.description } : {}),
    ...(mcp ? { mcp } : {}),
  });
  const wireDefinition: AgentDefinition = {
    model: definition.model,
    instructions: definition.instructions,
    workspace: definition.workspace,
    ...(definition.thinkingLevel ? { thinkingLevel: definition.thinkingLevel } : {}),
    // Secrets by name only: checkAgentMcp refused literal secret-looking header values.
    ...(definition.mcp ? { mcp: definition.mcp } : {}),
  };
  const logic: AgentLogic = fromCallback<EventObject, TurnInput>(({ self, input, system, sendBack }) => {
    recordTurnBaseline(self);
    const stop = runBindingOf(system)?.startTurn({ self, input, definition: wireDefinition, sendBack });
    return () => stop?.();
  });
  markAgentLogic(logic, definition);
  return logic;
}
