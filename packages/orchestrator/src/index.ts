/**
 * @jr2/orchestrator — the authoring API (jr2Setup, defineEvent, agent, gate, workspace), the
 * Menu, the Allowed picks, Rest, the delivery decision and Gates' readings, and the run host.
 * @see SPEC §3, §4, §5, §6
 */
// ── Machine semantics (engineer M) ─────────────────────────────────────────────────────────

export type { AgentInit, AgentLogic } from "./authoring/agent.js";
export { agent } from "./authoring/agent.js";
export type { AgentFaultEvent, AgentFaultReason, FaultGuard } from "./authoring/agent-fault.js";
export { faultCauseIs, faultGuard } from "./authoring/agent-fault.js";
export type { EventDefInit, TypedEventDef } from "./authoring/define-event.js";
export { defineEvent } from "./authoring/define-event.js";
export type { EventOf } from "./authoring/event-types.js";
export type { GateInput, GateLogic } from "./authoring/gate.js";
export { gate } from "./authoring/gate.js";
export type { NamedAction, NamedGuard } from "./authoring/named.js";
export { action, guard } from "./authoring/named.js";
export type { Jr2Machine, Jr2MachineConfig, Jr2SetupOptions } from "./authoring/setup.js";
export { jr2Setup } from "./authoring/setup.js";
export type { Jr2Setup, Jr2StateMeta } from "./authoring/setup-types.js";
export type { AuthoredTurnInput } from "./authoring/turn-input.js";
export { TURN_INPUT_KEYS } from "./authoring/turn-input.js";
export { workspace } from "./authoring/workspace.js";
export type { WorkspaceLostEvent } from "./authoring/workspace-lost-event.js";
export { readAllowedPicks } from "./menu/allowed-picks.js";
export type { PickDecision } from "./menu/delivery.js";
export { decidePick } from "./menu/delivery.js";
export type { Audience, EventDef } from "./menu/event-def.js";
export type { GateDecision, GateReading } from "./menu/gate-decisions.js";
export { decideGateEvent, readGate } from "./menu/gate-decisions.js";
export type { WorkspaceHandles } from "./menu/marks.js";
export { agentDefinitionOf, findWorkspaceHandles } from "./menu/marks.js";
export type { MachineInfo, MachineWarning } from "./menu/menu.js";
export { gateIdentityOf, getMenu, machineInfoOf, menuOfTurn } from "./menu/menu.js";
export { busyReason, isAtRest } from "./menu/rest.js";
export type { Sender, SentEvent } from "./menu/sender.js";
export { stampSender } from "./menu/sender.js";
export type { AnyActorSystem, GateStart, RunBinding, TurnInput, TurnStart } from "./xstate/run-binding.js";
export { bindRun, runBindingOf } from "./xstate/run-binding.js";

// ── end of Machine semantics ───────────────────────────────────────────────────────────────

export type { RestoreReport } from "./durability/restore.js";
export type {
  PickKey,
  RunBlob,
  RunStore,
  SavedTimer,
  StoredPickAnswer,
} from "./durability/store/run-store.js";
export { createMemoryStore } from "./durability/store/run-store.js";
export { openSqliteStore } from "./durability/store/sqlite.js";
export type { OrchestratorOptions } from "./http/server.js";
export { buildOrchestrator, ORCHESTRATOR_VERSION } from "./http/server.js";
export type { FeedEntry, FeedListener, RunFeed } from "./runs/feed.js";
export { createRunFeed } from "./runs/feed.js";
export type { RunHost, RunHostOptions, WorkflowTable } from "./runs/run-host.js";
export { createRunHost } from "./runs/run-host.js";
export type { HarnessChoice, ServeConfig, ServeFlags } from "./serve/config.js";
export { readServeConfig } from "./serve/config.js";
export { createLogger } from "./serve/logger.js";
export type { RunningOrchestrator } from "./serve/main.js";
export { startOrchestrator } from "./serve/main.js";
export type { LoadWorkflowsOptions } from "./serve/workflow-loader.js";
export { loadWorkflowFile, loadWorkflows } from "./serve/workflow-loader.js";
// ── Run host, HTTP and CLI (engineer H) ────────────────────────────────────────────────────
export type { AuthKeys, Caller, TokenCheck } from "./turns/access.js";
export { checkBearer, INSTANCE_CALLER, mayReach, mintSandboxToken } from "./turns/access.js";
export type { HarnessTurnDriverOptions } from "./turns/harness-turn-driver.js";
export { createHarnessTurnDriver } from "./turns/harness-turn-driver.js";
export type { Placement, PlacementOptions, WorkspaceProvider } from "./turns/placement.js";
export { staticWorkspaceProvider } from "./turns/placement.js";
export type {
  RegisterResult,
  Registration,
  RegistrationScope,
  RegistrationTable,
} from "./turns/registration-table.js";
export {
  createRegistrationTable,
  INSTANCE_SCOPE,
} from "./turns/registration-table.js";
export type { TurnContext, TurnDriver, TurnLedgerEntry, TurnTelemetry } from "./turns/turn-driver.js";
export { handPlayedTurnDriver } from "./turns/turn-driver.js";
// ── end of run host, HTTP and CLI ──────────────────────────────────────────────────────────
