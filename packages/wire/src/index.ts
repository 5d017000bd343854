/**
 * @jr2/wire — the contracts between the Orchestrator and the Harness, and of their HTTP APIs.
 * A compatibility surface: every export is named here on purpose.
 * @see SPEC §2, §4, §7.1, §7.6
 */
export { ChartEdge, ChartNode, MachineChart } from "./chart.js";
export { ClientSubmissionId, SUBMISSION_ARRIVAL_PATH } from "./client-submission-id.js";
export {
  ConversationHistory,
  HARNESS_RESTARTED,
  HistoryStreamEvent,
  HistorySubmission,
} from "./conversation-history.js";
export type { ErrorCode, ErrorCodeSpec } from "./errors.js";
export { ErrorBody, errorCodeList, errorCodes, formatErrorMessage, Jr2Error, jr2Error } from "./errors.js";
export { FAULT_CAUSE_DOCS } from "./fault-cause-docs.js";
export type { Usage } from "./harness.js";
export {
  AbortAnswer,
  Admission,
  AgentDefinition,
  FaultCause,
  History,
  ModelList,
  Notice,
  readFaultCause,
  readStreamEvent,
  readUsage,
  SettlementError,
  SettlementOutcome,
  StreamEvent,
  StreamPage,
  StreamQuery,
  SubmissionRequest,
  UsageField,
} from "./harness.js";
export { KvWaitField, QueuedFeedFields, QueuedStreamEvent } from "./kv-queue.js";
export {
  isSecretSafeUrl,
  isStdioServer,
  literalSecretProblem,
  MCP_SERVER_NAME_PATTERN,
  MCP_TOOL_PREFIX,
  McpHeaderValue,
  McpHttpServer,
  McpSecretRef,
  McpServer,
  McpServers,
  McpStdioServer,
  SECRET_NAME_PATTERN,
  secretRefProblem,
} from "./mcp.js";
export { McpSnapshotEntry } from "./mcp-snapshot.js";
export { escapeModelText } from "./model-text.js";
export {
  ControlClient,
  ForkAnswer,
  ForkRequest,
  MachineFaultRetry,
  ResumeAnswer,
  ResumeMenu,
  ResumeRequest,
  ResumeState,
  RetryAnswer,
  RetryRequest,
  RunHistory,
  RunVersion,
  RunVersionSummary,
  VersionCause,
} from "./operate.js";
export type { TolerantPickAnswer } from "./picks.js";
export { PickAnswer, PickIssue, PickRefusal, PickRequest, readPickAnswer } from "./picks.js";
export type { RunFeedEntry } from "./run-feed.js";
export { RunFeedEvent } from "./run-feed.js";
export {
  CancelAnswer,
  CancelRequest,
  Gate,
  GateEventAnswer,
  GateEventRequest,
  Health,
  RunDetail,
  RunFaultRecord,
  RunListQuery,
  RunOutcome,
  RunPage,
  RunStatus,
  RunSummary,
  StartRunAnswer,
  StartRunRequest,
  UsageTotals,
  WorkflowMenu,
  WorkflowSummary,
} from "./runs.js";
export {
  MIN_DISTINCT_CHARACTERS,
  MIN_SECRET_LENGTH,
  PLACEHOLDER_SECRETS,
  PLACEHOLDER_WORDS,
  SECRET_HINT,
  sandboxNameProblem,
  sandboxTokenProblem,
  secretProblem,
} from "./secrets.js";
export { SubmissionArrival } from "./submission-arrival.js";
export type { TolerantSurface } from "./surface.js";
export { LegacySurface, readSurface, Surface } from "./surface.js";
export type { WorkingToolName } from "./tool.js";
export {
  JsonSchema,
  ThinkingLevel,
  TOOL_NAME_PATTERN,
  Tool,
  WORKING_TOOL_NAMES,
  WorkspaceAccess,
} from "./tool.js";
export {
  CallDisposition,
  MessagePart,
  TRANSCRIPT_FIELD_CAP_BYTES,
  TranscriptEntry,
  TranscriptRecord,
  TranscriptStreamEvent,
  TranscriptToolCall,
  TurnList,
  TurnOutcome,
  TurnSummary,
  TurnTranscript,
} from "./transcript.js";
export {
  CREDENTIAL_PARAM,
  type CredentialAt,
  credentialInJson,
  credentialInUrl,
  URL_CREDENTIAL_FIX,
} from "./url-credentials.js";
export {
  AttachRequest,
  CheckoutAtRequest,
  CommitAnswer,
  CommitId,
  CommitRequest,
  DiffAnswer,
  DiffRequest,
  HookResult,
  type HookView,
  hookView,
  PublishSummary,
  PushAnswer,
  PushRequest,
  RemoveAnswer,
  RemoveRequest,
  RunRepos,
  RunSettledAnswer,
  SlotHandle,
  SlotRef,
  WorkspaceCommits,
} from "./workspace.js";
