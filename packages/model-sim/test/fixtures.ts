// Shared fixtures: a review-loop Menu (SPEC §3.7) as an OpenAI tools block, and raw-SSE readers.
import type { FastifyInstance } from "fastify";

export const approveTool = {
  type: "function",
  function: {
    name: "approve",
    description: "Approve the change.",
    parameters: {
      type: "object",
      properties: { summary: { type: "string", minLength: 3 } },
      required: ["summary"],
      additionalProperties: false,
    },
  },
};

export const requestChangesTool = {
  type: "function",
  function: {
    name: "request_changes",
    description: "Ask the coder for changes.",
    parameters: {
      type: "object",
      properties: { comments: { type: "array", items: { type: "string" }, minItems: 2 } },
      required: ["comments"],
      additionalProperties: false,
    },
  },
};

export const escalateTool = {
  type: "function",
  function: {
    name: "escalate",
    description: "Hand the review to a human.",
    parameters: {
      type: "object",
      properties: {
        severity: { type: "string", enum: ["high", "low"] },
        attempts: { type: "integer", minimum: 2, maximum: 5 },
        urgent: { type: "boolean" },
      },
      required: ["severity", "attempts", "urgent"],
    },
  },
};

export const lsTool = {
  type: "function",
  function: {
    name: "ls",
    description: "List a directory.",
    parameters: { type: "object", properties: { path: { type: "string" } } },
  },
};

export const readTool = {
  type: "function",
  function: {
    name: "read",
    description: "Read a file.",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
};

/** The Menu in Menu order (names sorted): approve, escalate, request_changes. */
export const menu = [approveTool, escalateTool, requestChangesTool];

export const systemMessage = {
  role: "system",
  content: "You review diffs. <jr2-briefing>Pick with a tool.</jr2-briefing>",
};

export function userTurn(
  allowedLine: string,
  prompt = "Review the diff of src/app.ts.",
): Record<string, unknown> {
  return { role: "user", content: `${prompt}\n<jr2-turn>${allowedLine}</jr2-turn>` };
}

export function assistantCall(id: string, name: string, args: unknown): Record<string, unknown> {
  return {
    role: "assistant",
    content: null,
    tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
  };
}

export function toolResult(id: string, content: string): Record<string, unknown> {
  return { role: "tool", tool_call_id: id, content };
}

export type Frame = Record<string, any> | "[DONE]";

/** Split a raw SSE payload into its `data:` frames (JSON, or the literal "[DONE]"). */
export function sseFrames(payload: string): Frame[] {
  return payload
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      if (!block.startsWith("data: ")) throw new Error(`not an SSE data frame: ${JSON.stringify(block)}`);
      const data = block.slice("data: ".length);
      return data === "[DONE]" ? "[DONE]" : JSON.parse(data);
    });
}

/** What the frames say, put together the way a client assembles them (tool calls grouped by index). */
export function assemble(frames: Frame[]) {
  let content = "";
  const calls = new Map<number, { id?: string; name?: string; arguments: string }>();
  const finishReasons: (string | null)[] = [];
  let usage: Record<string, any> | undefined;
  for (const frame of frames) {
    if (frame === "[DONE]") continue;
    if (frame.usage) usage = frame.usage;
    for (const choice of frame.choices) {
      finishReasons.push(choice.finish_reason);
      if (choice.delta.content) content += choice.delta.content;
      for (const delta of choice.delta.tool_calls ?? []) {
        const call = calls.get(delta.index) ?? { arguments: "" };
        if (delta.id) call.id = delta.id;
        if (delta.function?.name) call.name = delta.function.name;
        call.arguments += delta.function?.arguments ?? "";
        calls.set(delta.index, call);
      }
    }
  }
  const finishReason = finishReasons.filter((r) => r !== null).at(-1) ?? null;
  return { content, calls: [...calls.values()], finishReason, usage, done: frames.at(-1) === "[DONE]" };
}

/** POST a chat request body (an object, sent as JSON) with `app.inject`. */
export async function chat(app: FastifyInstance, body: Record<string, unknown>) {
  return app.inject({
    method: "POST",
    url: "/v1/chat/completions",
    headers: { "content-type": "application/json" },
    payload: JSON.stringify(body),
  });
}

/** A streamed request with the usage chunk asked for. */
export function streamed(
  model: string,
  messages: unknown[],
  tools: unknown[] = menu,
): Record<string, unknown> {
  return { model, stream: true, stream_options: { include_usage: true }, messages, tools };
}
