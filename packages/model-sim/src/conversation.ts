import { type ChatRequest, contentText } from "./chat-request.js";

/** The Harness's Working tools: calling one is work, not a pick. @see SPEC §1 */
export const WORKING_TOOLS: ReadonlySet<string> = new Set([
  "read",
  "write",
  "edit",
  "bash",
  "grep",
  "find",
  "ls",
]);

/** One earlier assistant tool call, with the Allowed picks stated when it was made. */
export interface PastCall {
  name: string;
  /** The newest "Allowed now:" list before this call; null when none had been stated. */
  allowedInForce: readonly string[] | null;
}

/**
 * What a policy reads off one request: the model's view of its conversation.
 * Derived from the request alone, so the simulator stays stateless between requests.
 *
 * @see SPEC §7.3 (the Allowed-picks line), §9
 */
export interface ConversationView {
  /** The tools block's names, in request order. */
  toolNames: readonly string[];
  /** The tools block's parameters by name. */
  parameters: ReadonlyMap<string, unknown>;
  /** The newest "Allowed now:" list in any user or tool message; null when none. */
  allowed: readonly string[] | null;
  /** A pick from the newest list was made after it and answered without a fresh list. */
  spent: boolean;
  /** Earlier assistant tool calls, oldest first. */
  calls: readonly PastCall[];
  /** The calls made after the newest user message (this Turn's, or since a nudge or restatement). */
  callsSinceUser: readonly PastCall[];
  /** Earlier assistant messages. */
  assistantAnswers: number;
}

const ALLOWED_LINE = /Allowed now:\s*([A-Za-z0-9_\-, ]*)\./g;

/**
 * The last "Allowed now: a, b." list in a text (`Allowed now: none.` → `[]`); null when absent.
 *
 * @example parseAllowedLine("…\nAllowed now: dispute, finish.") // → ["dispute", "finish"]
 */
export function parseAllowedLine(text: string): string[] | null {
  let last: string | undefined;
  for (const match of text.matchAll(ALLOWED_LINE)) last = match[1];
  if (last === undefined) return null;
  const names = last
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  return names.length === 1 && names[0] === "none" ? [] : names;
}

/**
 * Read a request's history the way a model reads it.
 *
 * @see SPEC §9
 */
export function readConversation(request: ChatRequest): ConversationView {
  const tools = request.tools ?? [];
  let allowed: string[] | null = null;
  let spent = false;
  const calls: PastCall[] = [];
  let callsSinceUser: PastCall[] = [];
  let assistantAnswers = 0;
  for (const message of request.messages) {
    if (message.role === "user") callsSinceUser = [];
    if (message.role === "user" || message.role === "tool") {
      const stated = parseAllowedLine(contentText(message.content));
      if (stated) {
        allowed = stated;
        spent = false;
      }
    } else if (message.role === "assistant") {
      assistantAnswers++;
      for (const call of message.tool_calls ?? []) {
        const name = call.function.name;
        calls.push({ name, allowedInForce: allowed });
        callsSinceUser.push({ name, allowedInForce: allowed });
        if (allowed?.includes(name)) spent = true;
      }
    }
  }
  return {
    toolNames: tools.map((tool) => tool.function.name),
    parameters: new Map(tools.map((tool) => [tool.function.name, tool.function.parameters ?? undefined])),
    allowed,
    spent,
    calls,
    callsSinceUser,
    assistantAnswers,
  };
}
