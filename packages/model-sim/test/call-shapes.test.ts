// The hostile tool-call stream shapes (issue 25): each as the servers named in call-shapes.ts send
// it, so the Harness meets them under `pnpm start` and CI, not only in scripted-upstream tests.
import { buildModelSim } from "@jr2/model-sim";
import { afterAll, describe, expect, it } from "vitest";
import { chat, sseFrames, streamed, systemMessage, userTurn } from "./fixtures.js";

const { app } = buildModelSim();
afterAll(() => app.close());

const turn = [systemMessage, userTurn("Allowed now: approve, request_changes.")];

/** Every `delta.tool_calls[]` entry of a stream, in order. */
async function toolDeltas(model: string) {
  const res = await chat(app, streamed(model, turn));
  const frames = sseFrames(res.payload).filter((f) => f !== "[DONE]") as any[];
  const deltas = frames.flatMap((f) => f.choices[0]?.delta?.tool_calls ?? []);
  const reasoning = frames.map((f) => f.choices[0]?.delta?.reasoning ?? "").join("");
  const finish = frames.map((f) => f.choices[0]?.finish_reason).find((r) => r);
  return { deltas, reasoning, finish };
}

describe("tool-call stream shapes", () => {
  it("dupcalls:3 sends the same call three times, indexes 0–2, distinct ids", async () => {
    const { deltas } = await toolDeltas("obedient+dupcalls:3");
    const heads = deltas.filter((d) => d.function?.name);
    expect(heads.map((d) => [d.index, d.function.name])).toEqual([
      [0, "approve"],
      [1, "approve"],
      [2, "approve"],
    ]);
    expect(new Set(heads.map((d) => d.id)).size).toBe(3);
  });

  it("sharedid sends two calls at indexes 0 and 1 under one id (llama.cpp)", async () => {
    const { deltas } = await toolDeltas("obedient+sharedid");
    const heads = deltas.filter((d) => d.function?.name);
    expect(heads.map((d) => d.index)).toEqual([0, 1]);
    expect(heads[0].id).toBe(heads[1].id);
  });

  it("noindex sends no index on any delta, the id on the first only (older Ollama)", async () => {
    const { deltas } = await toolDeltas("obedient+noindex");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => !("index" in d))).toBe(true);
    expect(deltas.filter((d) => d.id).length).toBe(1);
  });

  it("thinkcall writes the call as markup inside the reasoning, no tool_calls, finish stop (Qwen3 under vLLM)", async () => {
    const { deltas, reasoning, finish } = await toolDeltas("obedient+thinkcall");
    expect(deltas).toEqual([]);
    expect(reasoning).toMatch(/<tool_call>\n\{"name": "approve", "arguments": /);
    expect(finish).toBe("stop");
  });
});

describe("errorevent (issue 25 §5)", () => {
  it("streams half the answer, then vLLM's error event and nothing more; the same bytes again get through", async () => {
    const body = streamed("obedient+errorevent", turn);
    const first = await chat(app, body);
    const frames = sseFrames(first.payload);
    expect(frames.at(-1)).toMatchObject({
      error: { message: expect.stringContaining("CUDA out of memory") },
    });
    expect(frames).not.toContain("[DONE]");
    const second = await chat(app, body);
    expect(sseFrames(second.payload)).toContain("[DONE]");
  });
});

describe("overcache (issue 25 §6)", () => {
  it("reports more cached tokens than prompt tokens", async () => {
    const res = await chat(app, streamed("obedient+overcache", turn));
    const usage = (sseFrames(res.payload).find((f) => f !== "[DONE]" && (f as any).usage) as any).usage;
    expect(usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(usage.prompt_tokens);
  });
});
