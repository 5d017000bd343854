// @jr2/model-sim — an OpenAI-compatible model SIMULATOR for tests, demos and benchmarks (SPEC §9).
export { type BuildModelSimOptions, buildModelSim } from "./app.js";
export { type ChatRequest, parseChatRequest } from "./chat-request.js";
export {
  encodePrompt,
  renderPrompt,
  TEMPLATE_NAMES,
  type TemplateName,
  THINKING_TEMPLATES,
} from "./chat-template.js";
export { parseAllowedLine } from "./conversation.js";
export { KvClock } from "./kv/kv-clock.js";
export {
  KV_SCENARIO,
  KvEngine,
  type KvSequenceInput,
  type KvSequenceResult,
  type KvStats,
  type KvTimeModel,
} from "./kv/kv-engine.js";
export {
  FAULT_NAMES,
  type Faults,
  POLICY_NAMES,
  type Policy,
  parseModelName,
  type SimModel,
} from "./model-name.js";
export type { OpenAIErrorBody, SimErrorCode, VllmErrorBody } from "./openai-error.js";
export { INVENTED_TOOL, SILENT_TEXT } from "./policies.js";
export { type CacheLookup, PrefixCache } from "./prefix-cache.js";
export type { RecordedRequest, SimStats, SimUsage } from "./recorder.js";
export { exampleFromSchema } from "./schema-example.js";
export type { ChatOutcome, ModelSimOptions, Simulator } from "./simulator.js";
export { type RunningModelSim, type StartModelSimOptions, startModelSim } from "./start.js";
