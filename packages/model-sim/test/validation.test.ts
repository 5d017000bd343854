// The replays real servers refuse are refused here too, by name, in OpenAI's error shape.

import { buildModelSim } from "@jr2/model-sim";
import { afterAll, describe, expect, it } from "vitest";
import { assistantCall, chat, menu, systemMessage, toolResult, userTurn } from "./fixtures.js";

const { app, sim } = buildModelSim({ maxModelLen: 4096 });
afterAll(() => app.close());

const turn = [systemMessage, userTurn("Allowed now: approve.")];

async function refusal(body: Record<string, unknown>, status = 400) {
  const res = await chat(app, body);
  expect(res.statusCode).toBe(status);
  const error = res.json().error;
  expect(Object.keys(error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(error.type).toBe(status === 404 ? "not_found_error" : "invalid_request_error");
  return error as { message: string; type: string; param: string | null; code: string };
}

describe("request validation", () => {
  it("refuses a replayed tool call whose arguments are not JSON, naming the field", async () => {
    const bad = assistantCall("c1", "approve", {});
    (bad.tool_calls as any)[0].function.arguments = '{"summary": "cut';
    const error = await refusal({
      model: "obedient",
      tools: menu,
      messages: [...turn, bad, toolResult("c1", "x")],
    });
    expect(error.code).toBe("invalid_tool_call_arguments");
    expect(error.param).toBe("messages[2].tool_calls[0].function.arguments");
  });

  it("refuses a tool message whose tool_call_id matches no earlier call", async () => {
    const error = await refusal({
      model: "obedient",
      tools: menu,
      messages: [
        ...turn,
        assistantCall("c1", "approve", { summary: "ok" }),
        toolResult("c1", "x"),
        toolResult("c9", "y"),
      ],
    });
    expect(error.code).toBe("unknown_tool_call_id");
    expect(error.param).toBe("messages[4].tool_call_id");
    expect(error.message).toContain('"c9"');
  });

  it("refuses a second answer to one tool call", async () => {
    const error = await refusal({
      model: "obedient",
      tools: menu,
      messages: [
        ...turn,
        assistantCall("c1", "approve", { summary: "ok" }),
        toolResult("c1", "x"),
        toolResult("c1", "y"),
      ],
    });
    expect(error.code).toBe("duplicate_tool_result");
  });

  it("refuses a tool call left unanswered before the next message", async () => {
    const error = await refusal({
      model: "obedient",
      tools: menu,
      messages: [
        ...turn,
        assistantCall("c1", "approve", { summary: "ok" }),
        userTurn("Allowed now: approve."),
      ],
    });
    expect(error.code).toBe("tool_call_without_result");
    expect(error.param).toBe("messages[2].tool_calls");
  });

  it("refuses two tool calls with one id", async () => {
    const error = await refusal({
      model: "obedient",
      tools: menu,
      messages: [
        ...turn,
        assistantCall("c1", "approve", { summary: "ok" }),
        toolResult("c1", "x"),
        assistantCall("c1", "approve", { summary: "ok" }),
        toolResult("c1", "y"),
      ],
    });
    expect(error.code).toBe("duplicate_tool_call_id");
  });

  it("refuses a body that is not JSON, and a malformed message naming its path", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      headers: { "content-type": "application/json" },
      payload: "{",
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe("invalid_json");
    const error = await refusal({
      model: "obedient",
      messages: [systemMessage, { role: "robot", content: "hi" }],
    });
    expect(error.code).toBe("invalid_request");
    expect(error.param).toBe("messages[1].role");
    expect((await refusal({ model: "obedient", messages: [] })).param).toBe("messages");
  });

  it("refuses stream_options without stream, and a forced tool_choice without tools", async () => {
    expect(
      (await refusal({ model: "obedient", messages: turn, stream_options: { include_usage: true } })).code,
    ).toBe("invalid_stream_options");
    expect((await refusal({ model: "obedient", messages: turn, tool_choice: "required" })).code).toBe(
      "tool_choice_without_tools",
    );
  });

  it("refuses a prompt plus requested completion longer than the model length", async () => {
    const error = await refusal({
      model: "obedient",
      messages: turn,
      tools: menu,
      max_completion_tokens: 4000,
    });
    expect(error.code).toBe("context_length_exceeded");
    expect(error.message).toContain("4096");
  });

  it("answers 404 for an unknown policy or template, listing what is accepted", async () => {
    const unknown = await refusal({ model: "gpt-4o", messages: turn }, 404);
    expect(unknown.code).toBe("model_not_found");
    expect(unknown.message).toContain("obedient");
    expect((await refusal({ model: "obedient@mistral", messages: turn }, 404)).message).toContain("llama3");
  });

  it("records refused requests with their status and code", async () => {
    const refused = sim.recorder.list().filter((r) => r.status !== 200);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    expect(refused.every((r) => r.usage === null && typeof r.error === "string")).toBe(true);
  });
});
