/**
 * @jr2/orchestrator — the authoring API (jr2Setup, defineEvent, agent, gate, workspace), the
 * Menu, the Allowed picks, Rest, the delivery decision and Gates' readings, and the run host.
 * @see SPEC §3, §4, §5, §6
 */
// ── Machine semantics (engineer M) ─────────────────────────────────────────────────────────

export { readAllowedPicks } from "./allowed-picks.js";
export type { AgentInit, AgentLogic } from "./authoring/agent.js";
export { agent, agentDefinitionOf } from "./authoring/agent.js";
export type { Audience, EventDef, EventDefInit } from "./authoring/define-event.js";
export { defineEvent } from "./authoring/define-event.js";
export type { GateInput, GateLogic } from "./authoring/gate.js";
export { gate } from "./authoring/gate.js";
export type { AuthoredTurnInput } from "./authoring/turn-input.js";
export { TURN_INPUT_KEYS } from "./authoring/turn-input.js";
export type { WorkspaceHandles } from "./authoring/workspace.js";
export { findWorkspaceHandles, workspace } from "./authoring/workspace.js";
export type { PickDecision } from "./delivery.js";
export { decidePick } from "./delivery.js";
export type { GateDecision, GateReading } from "./gates.js";
export { decideGateEvent, readGate } from "./gates.js";
export type { MachineInfo, MachineWarning } from "./menu.js";
export { gateIdentityOf, getMenu, machineInfoOf, menuOfTurn } from "./menu.js";
export { busyReason, isAtRest } from "./rest.js";
export type { AnyActorSystem, GateStart, RunBinding, TurnInput, TurnStart } from "./run-binding.js";
export { bindRun, runBindingOf } from "./run-binding.js";
export type { Sender, SentEvent } from "./sender.js";
export { stampSender } from "./sender.js";
export type { Jr2Machine, Jr2MachineConfig, Jr2SetupOptions } from "./setup.js";
export { jr2Setup } from "./setup.js";
// ── end of Machine semantics ───────────────────────────────────────────────────────────────
