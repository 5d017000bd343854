/**
 * @jr2/harness — the stock agent server (§7): wire, conversations, pi engine, Briefing, receipts.
 * @see SPEC §7
 */
export type { BoundaryDecision, BoundaryState, LastRead, SurfaceRead } from "./between-steps.js";
export { decideBoundary, sameAllowed } from "./between-steps.js";
export { systemPrompt, turnPart, userMessageText } from "./briefing.js";
export { DEFAULT_CONVERSATION_TTL_MS } from "./conversations.js";
export { allowedLine, NUDGE_TEXT, receipt, restatement, STANDING_PART, unknownToolReceipt } from "./menu.js";
export type { ModelEntry, ModelTable } from "./models.js";
export { parseModelTable } from "./models.js";
export type { HarnessOptions } from "./server.js";
export { buildHarness, HARNESS_BODY_LIMIT, HARNESS_MAX_PARAM_LENGTH, HARNESS_VERSION } from "./server.js";
