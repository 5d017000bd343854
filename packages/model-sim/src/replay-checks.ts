import type { ChatMessage } from "./chat-request.js";
import { SimRequestError } from "./openai-error.js";

/**
 * Refuse a conversation history that real servers refuse when it is replayed.
 *
 * - an assistant `tool_calls[].function.arguments` that is not JSON (vLLM `json.loads` it
 *   before rendering the chat template) → `invalid_tool_call_arguments`;
 * - two tool calls with one id → `duplicate_tool_call_id`;
 * - a tool message whose `tool_call_id` matches no earlier call → `unknown_tool_call_id`,
 *   or a call already answered → `duplicate_tool_result`;
 * - an assistant tool call not answered by tool messages before the next other message, or by
 *   the end of the history → `tool_call_without_result` (OpenAI's rule; stricter than vLLM, so a
 *   history that passes here passes on both).
 *
 * @throws SimRequestError with the codes above; `param` names the offending field.
 * @see SPEC §9
 */
export function checkReplay(messages: readonly ChatMessage[]): void {
  const seen = new Set<string>();
  const answered = new Set<string>();
  let pending: { id: string; at: number }[] = [];

  const requireAnswered = (index: number): void => {
    const open = pending.find((call) => !answered.has(call.id));
    if (open) {
      throw new SimRequestError(
        "tool_call_without_result",
        `messages[${open.at}] calls a tool with id ${JSON.stringify(open.id)}, and no tool message answers it before ` +
          (index < messages.length ? `messages[${index}]` : "the end of the messages"),
        `messages[${open.at}].tool_calls`,
      );
    }
    pending = [];
  };

  messages.forEach((message, index) => {
    if (message.role !== "tool") requireAnswered(index);
    if (message.role === "assistant") {
      (message.tool_calls ?? []).forEach((call, c) => {
        const param = `messages[${index}].tool_calls[${c}]`;
        if (seen.has(call.id)) {
          throw new SimRequestError(
            "duplicate_tool_call_id",
            `${param}.id ${JSON.stringify(call.id)} was already used by an earlier tool call`,
            `${param}.id`,
          );
        }
        try {
          JSON.parse(call.function.arguments);
        } catch (err) {
          throw new SimRequestError(
            "invalid_tool_call_arguments",
            `${param}.function.arguments is not valid JSON (${(err as Error).message}): ` +
              JSON.stringify(call.function.arguments.slice(0, 80)),
            `${param}.function.arguments`,
          );
        }
        seen.add(call.id);
        pending.push({ id: call.id, at: index });
      });
    }
    if (message.role === "tool") {
      const param = `messages[${index}].tool_call_id`;
      if (!seen.has(message.tool_call_id)) {
        throw new SimRequestError(
          "unknown_tool_call_id",
          `${param} ${JSON.stringify(message.tool_call_id)} matches no earlier assistant tool call`,
          param,
        );
      }
      if (answered.has(message.tool_call_id)) {
        throw new SimRequestError(
          "duplicate_tool_result",
          `${param} ${JSON.stringify(message.tool_call_id)} was already answered by an earlier tool message`,
          param,
        );
      }
      answered.add(message.tool_call_id);
    }
  });
  requireAnswered(messages.length);
}
