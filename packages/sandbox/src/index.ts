/**
 * @jr2/sandbox — every Working tool of a run in its own bubblewrap sandbox (issue 26,
 * ADR-0170, ADR-0171). Engine-neutral: the Harness adapter maps pi's tools onto it (README).
 */
export { type ConfinedFiles, confinedFiles, PathRefusedError } from "./confined-files.js";
export {
  type EgressProxy,
  type EgressProxyOptions,
  type EgressResolver,
  hostAllowed,
  startEgressProxy,
} from "./egress-proxy.js";
export { featureReductions, type SandboxFeatures, sandboxFeatures } from "./features.js";
export { DEFAULT_TOOL_LIMITS, limitMessage } from "./limits.js";
export { HIDDEN_SYSTEM_PATHS, SANDBOX_HOME } from "./mounts.js";
export {
  type MemoryLimit,
  memoryLimitKind,
  probeSandbox,
  type SandboxLayer,
  type SandboxProbe,
} from "./probe.js";
export { runTool } from "./run-tool.js";
export { FORWARDER_PORT } from "./sandbox-process.js";
export { type SandboxedService, type ServiceEgress, spawnService } from "./spawn-service.js";
export type {
  LimitHit,
  RunAccess,
  SandboxMounts,
  SandboxNetwork,
  SandboxProcessSpec,
  SandboxUser,
  ToolLimits,
  ToolResult,
  ToolSpec,
} from "./spec.js";
export {
  type RunSandbox,
  type RunToolOperations,
  runToolOperations,
  type SandboxBashOperations,
  sniffImageMimeType,
} from "./tool-operations.js";
export { DEFAULT_SANDBOX_UID, ownForSandbox, sandboxUser } from "./user.js";
