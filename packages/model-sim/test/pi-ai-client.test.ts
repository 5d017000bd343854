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

/**
 * What a client built on pi-ai sees of each fault (maxRetries 0: the OpenAI SDK's own retries
 * off), so the Harness's classification can be checked against it: several classes reach pi as
 * an ordinary end and must be caught by the Harness itself.
 */
describe("each fault as pi-ai's openai-completions client sees it", () => {
  const ask = async (id: string, maxTokens = 4096) => {
    const context: Context = {
      systemPrompt: "You review diffs.",
      messages: [{ role: "user", content: "Review.\nAllowed now: approve.", timestamp: Date.now() }],
      tools,
    };
    const events = streamSimple(simModel(id), context, { apiKey: "model-sim", maxTokens, maxRetries: 0 });
    for await (const _event of events) {
      // drain
    }
    return events.result();
  };

  it.each([
    ["abort", "error", /finish_reason: abort/],
    ["cut", "error", /terminated|socket|other side closed/i],
    ["loading:1", "error", /503/],
    ["ratelimit:1,0", "error", /429/],
    ["overflow:10", "error", /400/],
  ])("%s → stopReason %s", async (id, stopReason, message) => {
    const result = await ask(id);
    expect(result.stopReason).toBe(stopReason);
    expect(result.errorMessage ?? "").toMatch(message);
  });

  it("answers that pi takes as an ordinary end, for the Harness to catch", async () => {
    const dropped = await ask("dropper");
    expect(dropped.stopReason).toBe("stop"); // no finish_reason at all (C6): pi calls it a stop
    const text = await ask("textcall");
    expect(text.stopReason).toBe("stop");
    expect(text.content.some((c) => c.type === "toolCall")).toBe(false);
    const long = await ask("overlong", 200);
    expect(long.stopReason).toBe("length");
    const thinking = await ask("obedient+think:50");
    expect(thinking.content.find((c) => c.type === "thinking")).toMatchObject({
      thinkingSignature: "reasoning",
    });
    const bare = await ask("nodetails");
    expect(bare.usage.cacheRead).toBe(0); // not reported, read as 0 by pi: the Harness must say "unknown"
    const none = await ask("nousage");
    expect(none.usage.input).toBe(0);
  });
});
