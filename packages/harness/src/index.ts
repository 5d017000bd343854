/**
 * @jr2/harness — the stock agent server (§7): wire, conversations, pi engine, Briefing, receipts.
 * @see SPEC §7
 */

export { DEFAULT_CONVERSATION_TTL_MS } from "./conversations/conversations.js";
export { systemPrompt, turnPart, userMessageText } from "./presenters/briefing.js";
export {
  allowedLine,
  NUDGE_TEXT,
  receipt,
  restatement,
  STANDING_PART,
  unknownToolReceipt,
} from "./presenters/menu.js";
export type { ModelEntry, ModelTable } from "./provider/models.js";
export { parseModelTable } from "./provider/models.js";
export type { BoundaryDecision, BoundaryState, LastRead, SurfaceRead } from "./turn/between-steps.js";
export { decideBoundary, sameAllowed } from "./turn/between-steps.js";
export type { HarnessOptions } from "./wire/server.js";
export {
  buildHarness,
  HARNESS_BODY_LIMIT,
  HARNESS_MAX_PARAM_LENGTH,
  HARNESS_VERSION,
} from "./wire/server.js";
