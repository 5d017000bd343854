import { buildModelSim, INVENTED_TOOL, SILENT_TEXT } from "@jr2/model-sim";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  assemble,
  assistantCall,
  chat,
  lsTool,
  menu,
  readTool,
  sseFrames,
  streamed,
  systemMessage,
  toolResult,
  userTurn,
} from "./fixtures.js";

const { app } = buildModelSim();
afterAll(() => app.close());

async function answer(model: string, messages: unknown[], tools: unknown[] = menu) {
  const res = await chat(app, streamed(model, messages, tools));
  expect(res.statusCode).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^text\/event-stream/);
  const frames = sseFrames(res.payload);
  return { frames, ...assemble(frames) };
}

function schemaOf(name: string): z.ZodType {
  const tool = menu.find((t) => t.function.name === name)!;
  return z.fromJSONSchema(tool.function.parameters as never);
}

const turn = [systemMessage, userTurn("Allowed now: approve, request_changes.")];

describe("obedient", () => {
  it("calls the first pick of the newest Allowed line, with arguments valid for its schema, in vLLM's frame shapes", async () => {
    const { frames, calls, finishReason, usage, done } = await answer("obedient", turn);
    const first = frames[0] as Record<string, any>;
    expect(first.object).toBe("chat.completion.chunk");
    expect(first.choices[0].delta).toEqual({ role: "assistant", content: "" });
    const head = frames.find((f) => f !== "[DONE]" && f.choices[0]?.delta.tool_calls?.[0]?.id) as Record<
      string,
      any
    >;
    expect(head.choices[0].delta.tool_calls[0]).toMatchObject({
      index: 0,
      type: "function",
      function: { name: "approve" },
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.name).toBe("approve");
    expect(schemaOf("approve").safeParse(JSON.parse(calls[0]!.arguments)).success).toBe(true);
    expect(finishReason).toBe("tool_calls");
    const usageFrame = frames.at(-2) as Record<string, any>;
    expect(usageFrame.choices).toEqual([]);
    expect(usage!.prompt_tokens).toBeGreaterThan(100);
    expect(done).toBe(true);
  });

  it("reads the newest Allowed line, in a tool message after the user's", async () => {
    const messages = [
      ...turn,
      assistantCall("c1", "ls", { path: "." }),
      toolResult("c1", "src/\nREADME.md"),
      assistantCall("c2", "escalate", { severity: "high", attempts: 2, urgent: true }),
      toolResult("c2", "escalate is not allowed. Allowed now: request_changes, escalate."),
    ];
    const { calls } = await answer("obedient", messages, [...menu, lsTool]);
    expect(calls[0]!.name).toBe("request_changes");
    expect(schemaOf("request_changes").safeParse(JSON.parse(calls[0]!.arguments)).success).toBe(true);
  });

  it("answers text and stops when the newest line is `Allowed now: none.`", async () => {
    const { calls, content, finishReason } = await answer("obedient", [
      systemMessage,
      userTurn("Allowed now: none. Every pick is refused until the workflow opens one."),
    ]);
    expect(calls).toEqual([]);
    expect(content.length).toBeGreaterThan(0);
    expect(finishReason).toBe("stop");
  });

  it("stops once its pick was answered without a fresh Allowed line (the Turn is over)", async () => {
    const { calls, finishReason } = await answer("obedient", [
      ...turn,
      assistantCall("c1", "approve", { summary: "fine" }),
      toolResult(
        "c1",
        'Delivered "approve". The workflow moved on; your turn is over. Call no further tool.',
      ),
    ]);
    expect(calls).toEqual([]);
    expect(finishReason).toBe("stop");
  });
});

describe("worker", () => {
  const tools = [lsTool, readTool, ...menu];
  it("worker:2 calls Working tools for two steps, then picks", async () => {
    const first = await answer("worker:2", turn, tools);
    expect(first.calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([["ls", { path: "." }]]);
    const second = await answer(
      "worker:2",
      [...turn, assistantCall("w1", "ls", { path: "." }), toolResult("w1", "a")],
      tools,
    );
    expect(second.calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ["read", { path: "README.md" }],
    ]);
    const third = await answer(
      "worker:2",
      [
        ...turn,
        assistantCall("w1", "ls", { path: "." }),
        toolResult("w1", "a"),
        assistantCall("w2", "read", { path: "README.md" }),
        toolResult("w2", "b"),
      ],
      tools,
    );
    expect(third.calls.map((c) => c.name)).toEqual(["approve"]);
    expect(third.finishReason).toBe("tool_calls");
  });
});

describe("disobedient", () => {
  it("first picks a Menu tool the Allowed line does not list, then recovers after the refusal", async () => {
    const narrow = [systemMessage, userTurn("Allowed now: request_changes.")];
    const wrong = await answer("disobedient", narrow);
    expect(wrong.calls.map((c) => c.name)).toEqual(["approve"]);
    const id = wrong.calls[0]!.id!;
    const recovered = await answer("disobedient", [
      ...narrow,
      assistantCall(id, "approve", JSON.parse(wrong.calls[0]!.arguments)),
      toolResult(id, "approve is not allowed in the workflow's current state. Allowed now: request_changes."),
    ]);
    expect(recovered.calls.map((c) => c.name)).toEqual(["request_changes"]);
  });
});

describe("stubborn (issue 25 §11)", () => {
  it("alternates two Menu picks outside the Allowed list, and never recovers", async () => {
    const closed = [systemMessage, userTurn("Allowed now: merge.")];
    const refused = (id: string, name: string) => [
      assistantCall(id, name, {}),
      toolResult(id, `${name} is not allowed in the workflow's current state. Allowed now: merge.`),
    ];
    const first = await answer("stubborn", closed);
    const second = await answer("stubborn", [...closed, ...refused("s1", "approve")]);
    const third = await answer("stubborn", [
      ...closed,
      ...refused("s1", "approve"),
      ...refused("s2", "escalate"),
    ]);
    expect([first, second, third].map((a) => a.calls.map((c) => c.name))).toEqual([
      ["approve"],
      ["escalate"],
      ["approve"],
    ]);
  });
});

describe("inventor (C2)", () => {
  it("C2: calls run_tests with {} — a tool the tools block lacks — then behaves as obedient", async () => {
    const invented = await answer("inventor", turn);
    expect(invented.calls.map((c) => [c.name, c.arguments])).toEqual([[INVENTED_TOOL, "{}"]]);
    expect(menu.map((t) => t.function.name)).not.toContain(INVENTED_TOOL);
    const next = await answer("inventor", [
      ...turn,
      assistantCall("i1", INVENTED_TOOL, {}),
      toolResult("i1", "run_tests does not exist in this workflow. Allowed now: approve, request_changes."),
    ]);
    expect(next.calls.map((c) => c.name)).toEqual(["approve"]);
  });
});

describe("silent (C5)", () => {
  it("C5: answers plain text and finish_reason stop while picks are allowed", async () => {
    const { calls, content, finishReason, frames } = await answer("silent", turn);
    expect(calls).toEqual([]);
    expect(content).toBe(SILENT_TEXT);
    expect(finishReason).toBe("stop");
    expect(frames.some((f) => f !== "[DONE]" && f.choices[0]?.delta.tool_calls)).toBe(false);
  });

  it("silent:1 is silent for its first answer of a conversation only", async () => {
    const nudged = [
      ...turn,
      { role: "assistant", content: SILENT_TEXT },
      userTurn(
        "Allowed now: approve, request_changes.",
        "Your previous turn ended, and the workflow is still waiting for your pick.",
      ),
    ];
    expect((await answer("silent:1", turn)).content).toBe(SILENT_TEXT);
    expect((await answer("silent:1", nudged)).calls.map((c) => c.name)).toEqual(["approve"]);
    expect((await answer("silent", nudged)).content).toBe(SILENT_TEXT);
  });
});

describe("textcall (C1)", () => {
  it("C1: writes the call as markup in content, no tool_calls, finish_reason stop", async () => {
    const { calls, content, finishReason } = await answer("textcall", turn);
    expect(calls).toEqual([]);
    expect(finishReason).toBe("stop");
    const markup = /<tool_call>\n(.*)\n<\/tool_call>/s.exec(content);
    expect(markup).not.toBeNull();
    const written = JSON.parse(markup![1]!);
    expect(written.name).toBe("approve");
    expect(schemaOf("approve").safeParse(written.arguments).success).toBe(true);
  });
});

describe("stringified", () => {
  it("sends the arguments as a JSON string inside a string", async () => {
    const { calls, finishReason } = await answer("stringified", turn);
    const once = JSON.parse(calls[0]!.arguments);
    expect(typeof once).toBe("string");
    expect(schemaOf("approve").safeParse(JSON.parse(once)).success).toBe(true);
    expect(finishReason).toBe("tool_calls");
  });
});

describe("truncated", () => {
  it('cuts the arguments mid-string with finish_reason "length"', async () => {
    const { calls, finishReason, done } = await answer("truncated", turn);
    expect(finishReason).toBe("length");
    expect(calls[0]!.name).toBe("approve");
    expect(calls[0]!.arguments).toMatch(/^\{"summary":"[^"]+$/);
    expect(() => JSON.parse(calls[0]!.arguments)).toThrow();
    expect(done).toBe(true);
  });
});

describe("dropper (C6)", () => {
  it("C6: closes the stream after a partial tool call — no finish_reason, no usage, no [DONE]", async () => {
    const { frames, calls, finishReason, usage, done } = await answer("dropper", turn);
    expect(calls[0]!.name).toBe("approve");
    expect(() => JSON.parse(calls[0]!.arguments)).toThrow();
    expect(finishReason).toBeNull();
    expect(usage).toBeUndefined();
    expect(done).toBe(false);
    expect(frames.every((f) => f !== "[DONE]" && f.choices[0].finish_reason === null)).toBe(true);
  });
});

describe("slow", () => {
  it("slow:N sends obedient's frames, waiting N ms before each token", async () => {
    const started = Date.now();
    const slow = await answer("slow:15", turn);
    const elapsed = Date.now() - started;
    const obedient = await answer("obedient", turn);
    const strip = (frames: typeof slow.frames) =>
      frames.map((f) => (f === "[DONE]" ? f : { ...f, model: undefined, id: undefined, created: undefined }));
    const withoutIds = (frames: typeof slow.frames) =>
      JSON.stringify(strip(frames)).replace(/chatcmpl-tool-[0-9a-f]+/g, "ID");
    expect(withoutIds(slow.frames)).toBe(withoutIds(obedient.frames));
    // A lower bound only: each content-bearing frame waited 15 ms first.
    const paced = slow.frames.filter(
      (f) => f !== "[DONE]" && (f.choices[0]?.delta.tool_calls || f.choices[0]?.delta.content),
    );
    expect(elapsed).toBeGreaterThanOrEqual(paced.length * 15 - 15);
  });
});

describe("script", () => {
  const model = "script:request_changes,approve";
  it("calls the listed picks in order, each when it is allowed", async () => {
    const first = await answer(model, turn);
    expect(first.calls.map((c) => c.name)).toEqual(["request_changes"]);
    const secondTurn = [
      ...turn,
      assistantCall("s1", "request_changes", { comments: ["a", "b"] }),
      toolResult(
        "s1",
        'Delivered "request_changes". The workflow moved on; your turn is over. Call no further tool.',
      ),
      userTurn("Allowed now: approve, request_changes.", "The coder revised the diff. Review it again."),
    ];
    const second = await answer(model, secondTurn);
    expect(second.calls.map((c) => c.name)).toEqual(["approve"]);
  });

  it("behaves as obedient while its next pick is not allowed", async () => {
    const { calls } = await answer(model, [systemMessage, userTurn("Allowed now: escalate.")]);
    expect(calls.map((c) => c.name)).toEqual(["escalate"]);
    expect(schemaOf("escalate").safeParse(JSON.parse(calls[0]!.arguments)).success).toBe(true);
  });
});
