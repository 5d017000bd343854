/**
 * @jr2/conformance — the tier of SPEC §10: pure assertions over recordings (raw model request
 * bodies, HTTP answers) and the targets that start the shipped services from the outside.
 * @see SPEC §10, §11
 */

export type { SeenNudge } from "./assertions/ask-again.js";
export { askAgainRule, faultedAfterBudget, nudgesOf, wokeWhenPickOpened } from "./assertions/ask-again.js";
export { eachRequestExtendsThePrevious, extendsPrevious } from "./assertions/byte-prefix.js";
export type { HttpAnswer } from "./assertions/gate.js";
export { gateListed, gateRefusedWithAcceptsNow, nothingDelivered } from "./assertions/gate.js";
export type { MenuObservation } from "./assertions/menu.js";
export { menuIdenticalAcrossStates, toolsBlockPresentsMenu } from "./assertions/menu.js";
export type { ExpectedReceipt, SeenReceipt } from "./assertions/receipts.js";
export { receiptClassesPresent, receiptsOf } from "./assertions/receipts.js";
export {
  countRestatements,
  noRequestAfterTurnEnded,
  restatementsWellPlaced,
} from "./assertions/restatement.js";
export type { CrashPhase } from "./assertions/restore.js";
export { noPromptAdmittedTwice } from "./assertions/restore.js";
export { legacySurfacePresented, oldAnswerRendered } from "./assertions/skew.js";
export {
  allowedOfRequest,
  describeToolsDifference,
  sameToolsAcrossAllowedPicks,
  sameToolsBlock,
} from "./assertions/tools-block.js";
export type { ReadMessage, ToolCall } from "./conversation.js";
export { readConversation } from "./conversation.js";
export type { GitFixture } from "./git-fixture.js";
export { makeGitFixture, userGit } from "./git-fixture.js";
export { DEFAULT_IMAGES } from "./image-target.js";
export type { Member, Span } from "./json-scan.js";
export { arrayElements, JsonScanError, objectMembers } from "./json-scan.js";
export { BINARIES } from "./process-target.js";
export { freePort } from "./processes.js";
export type { ReceiptClass } from "./receipt-class.js";
export { classifyReceipt, RECEIPT_CLASSES } from "./receipt-class.js";
export type { RecordedRequest } from "./recordings.js";
export { conversationOf, modelsOf } from "./recordings.js";
export type { ChatMessage, RequestBody } from "./request-body.js";
export { readRequestBody } from "./request-body.js";
export { sandboxToken } from "./service-env.js";
export type { ModelEntry, Stack, StackOptions, TargetKind } from "./stack.js";
export { missingBinaries, startStack, targetFromEnv } from "./targets.js";
export {
  lastAllowedList,
  NOT_ALLOWED_TAIL,
  NUDGE_TEXT,
  RESTATEMENT_OPENING,
  turnOverReceipt,
} from "./texts.js";
export { fillDisk, mountTmpfs } from "./tmpfs.js";
export type { Verdict } from "./verdict.js";
export type { RunFacts, SqlReader, VersionRow, WorktreeVerdict } from "./worktree-invariants.js";
export { checkWorktrees, runFactsFromSqlite } from "./worktree-invariants.js";
