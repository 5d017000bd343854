// The pi-ai client, as the Harness uses it (openai-completions API, vLLM compat), runs a
// multi-step conversation against model-sim with no error (SPEC §7.7, §9).

import { type RunningModelSim, startModelSim } from "@jr2/model-sim";
import {
  type AssistantMessage,
  type Context,
  type Model,
  streamSimple,
  type ToolCall,
  Type,
} from "@mariozechner/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let sim: RunningModelSim;
beforeAll(async () => {
  sim = await startModelSim();
});
afterAll(() => sim.close());

function simModel(id: string): Model<"openai-completions"> {
  return {
    id,
    name: `model-sim ${id} (simulator)`,
    api: "openai-completions",
    provider: "model-sim",
    baseUrl: sim.baseUrl,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 131_072,
    maxTokens: 4096,
    compat: { supportsDeveloperRole: false, supportsStore: false },
  };
}

const tools = [
  {
    name: "ls",
    description: "List a directory.",
    parameters: Type.Object({ path: Type.Optional(Type.String()) }),
  },
  { name: "read", description: "Read a file.", parameters: Type.Object({ path: Type.String() }) },
  {
    name: "approve",
    description: "Approve the change.",
    parameters: Type.Object({ summary: Type.String() }),
  },
  {
    name: "request_changes",
    description: "Ask for changes.",
    parameters: Type.Object({ comments: Type.Array(Type.String(), { minItems: 1 }) }),
  },
];

async function step(model: Model<"openai-completions">, context: Context): Promise<AssistantMessage> {
  const events = streamSimple(model, context, { apiKey: "model-sim", maxTokens: 4096 });
  for await (const _event of events) {
    // drain: the Harness consumes every event
  }
  const message = await events.result();
  context.messages.push(message);
  return message;
}

function answer(context: Context, call: ToolCall, text: string): void {
  context.messages.push({
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text }],
    isError: false,
    timestamp: Date.now(),
  });
}

describe("pi-ai openai-completions against model-sim", () => {
  it("runs two Working-tool steps, two picks and a stop with no error, reading cached tokens", async () => {
    const model = simModel("worker:2");
    const context: Context = {
      systemPrompt:
        "You review diffs. <jr2-briefing>Pick with a tool the newest Allowed now lists.</jr2-briefing>",
      messages: [
        {
          role: "user",
          content: "Review the diff.\n<jr2-turn>Allowed now: request_changes.</jr2-turn>",
          timestamp: Date.now(),
        },
      ],
      tools,
    };
    const names: string[] = [];
    for (let i = 0; i < 3; i++) {
      const message = await step(model, context);
      expect(message.stopReason, message.errorMessage).toBe("toolUse");
      const call = message.content.find((c): c is ToolCall => c.type === "toolCall")!;
      names.push(call.name);
      answer(
        context,
        call,
        call.name === "request_changes"
          ? 'Delivered "request_changes". Your turn is not over.\nAllowed now: approve.'
          : "ok",
      );
    }
    expect(names).toEqual(["ls", "read", "request_changes"]);
    const pick = await step(model, context);
    const approve = pick.content.find((c): c is ToolCall => c.type === "toolCall")!;
    expect(approve.name).toBe("approve");
    expect(approve.arguments).toEqual({ summary: "example summary" });
    answer(
      context,
      approve,
      'Delivered "approve". The workflow moved on; your turn is over. Call no further tool.',
    );
    const stop = await step(model, context);
    expect(stop.stopReason).toBe("stop");
    expect(stop.usage.cacheRead).toBeGreaterThan(0);
    expect(stop.usage.input + stop.usage.cacheRead).toBe(sim.requests().at(-1)!.usage!.prompt_tokens);
    expect(sim.requests().every((r) => r.status === 200)).toBe(true);
  });

  it("C6: a dropped stream reaches pi as a normal end and a truncated answer as length — both for the Harness to catch", async () => {
    const context = (): Context => ({
      messages: [{ role: "user", content: "Allowed now: approve.", timestamp: Date.now() }],
      tools,
    });
    const dropped = await step(simModel("dropper"), context());
    expect(dropped.stopReason).toBe("stop");
    expect(sim.requests().at(-1)!.status).toBe(200);
    const truncated = await step(simModel("truncated"), context());
    expect(truncated.stopReason).toBe("length");
  });
});
