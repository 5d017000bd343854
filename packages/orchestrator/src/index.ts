/**
 * @jr2/orchestrator — the authoring API (jr2Setup, defineEvent, agent, gate, workspace), the
 * Menu, the Allowed picks, Rest, the delivery decision and Gates' readings, and the run host.
 * @see SPEC §3, §4, §5, §6
 */
// ── Machine semantics (engineer M) ─────────────────────────────────────────────────────────

export { readAllowedPicks } from "./allowed-picks.js";
export type { AgentInit, AgentLogic } from "./authoring/agent.js";
export { agent, agentDefinitionOf } from "./authoring/agent.js";
export type { AgentFaultEvent, AgentFaultReason, FaultGuard } from "./authoring/agent-fault.js";
export { faultCauseIs, faultGuard } from "./authoring/agent-fault.js";
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

// ── Run host, HTTP and CLI (engineer H) ────────────────────────────────────────────────────
export type { AuthKeys, Caller, TokenCheck } from "./auth.js";
export { checkBearer, INSTANCE_CALLER, mayReach, mintSandboxToken } from "./auth.js";
export type { HarnessChoice, ServeConfig, ServeFlags } from "./config.js";
export { readServeConfig } from "./config.js";
export type { FeedEntry, FeedListener, RunFeed } from "./feed.js";
export { createRunFeed } from "./feed.js";
export type { HarnessTurnDriverOptions } from "./harness-turn-driver.js";
export { createHarnessTurnDriver } from "./harness-turn-driver.js";
export { createLogger } from "./logger.js";
export type { RunningOrchestrator } from "./main.js";
export { startOrchestrator } from "./main.js";
export type { Placement, PlacementOptions, WorkspaceProvider } from "./placement.js";
export { staticWorkspaceProvider } from "./placement.js";
export type {
  RegisterResult,
  Registration,
  RegistrationScope,
  RegistrationTable,
} from "./registration-table.js";
export {
  createRegistrationTable,
  INSTANCE_SCOPE,
} from "./registration-table.js";
export type { RestoreReport } from "./restore.js";
export type { RunHost, RunHostOptions, WorkflowTable } from "./run-host.js";
export { createRunHost } from "./run-host.js";
export type { OrchestratorOptions } from "./server.js";
export { buildOrchestrator, ORCHESTRATOR_VERSION } from "./server.js";
export type { PickKey, RunBlob, RunStore, SavedTimer, StoredPickAnswer } from "./store/run-store.js";
export { createMemoryStore } from "./store/run-store.js";
export { openSqliteStore } from "./store/sqlite.js";
export type { TurnContext, TurnDriver, TurnLedgerEntry, TurnTelemetry } from "./turn-driver.js";
export { handPlayedTurnDriver } from "./turn-driver.js";
export type { LoadWorkflowsOptions } from "./workflow-loader.js";
export { loadWorkflowFile, loadWorkflows } from "./workflow-loader.js";
// ── end of run host, HTTP and CLI ──────────────────────────────────────────────────────────
