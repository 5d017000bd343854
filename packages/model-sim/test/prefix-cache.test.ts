// Cache accounting checked against an oracle, not against itself (SPEC §9): for each request the
// expected cached tokens = the longest common token prefix with any earlier prompt, capped at
// prompt_tokens − 1 (the last prompt token is always recomputed), floored to the 16-token block.

import {
  buildModelSim,
  encodePrompt,
  parseChatRequest,
  renderPrompt,
  type TemplateName,
} from "@jr2/model-sim";
import { afterAll, describe, expect, it } from "vitest";
import {
  approveTool,
  assistantCall,
  chat,
  escalateTool,
  menu,
  requestChangesTool,
  systemMessage,
  toolResult,
  userTurn,
} from "./fixtures.js";

const BLOCK = 16;

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** One simulator plus the oracle's own memory of every prompt it was sent. */
function session(template: TemplateName) {
  const { app } = buildModelSim();
  const earlier: number[][] = [];
  return {
    app,
    async send(model: string, body: Record<string, unknown>) {
      const full = { model, ...body };
      const tokens = encodePrompt(template, renderPrompt(template, parseChatRequest(JSON.stringify(full))));
      const lcp = Math.max(0, ...earlier.map((prompt) => commonPrefix(prompt, tokens)));
      const expected = Math.floor(Math.min(lcp, tokens.length - 1) / BLOCK) * BLOCK;
      earlier.push(tokens);
      const res = await chat(app, full);
      expect(res.statusCode).toBe(200);
      const usage = res.json().usage;
      expect(usage.prompt_tokens).toBe(tokens.length);
      expect(usage.prompt_tokens_details.cached_tokens).toBe(expected);
      return { cached: usage.prompt_tokens_details.cached_tokens as number, prompt: tokens.length, tokens };
    },
  };
}

// A history long enough that a block-sized difference is visible (~2k tokens).
const diff = Array.from(
  { length: 60 },
  (_, i) => `+ const value${i} = compute(${i}, "line ${i} of the change");`,
).join("\n");
const longTurn = userTurn("Allowed now: approve, request_changes.", `Review this diff:\n${diff}`);
const base = { messages: [systemMessage, longTurn], tools: menu };

describe("prefix-cache accounting against the oracle (Qwen3 template)", () => {
  const sim = session("qwen3");
  afterAll(() => sim.app.close());

  it("identical requests: the second hits every full block but the last token's", async () => {
    const first = await sim.send("obedient", base);
    expect(first.cached).toBe(0);
    const second = await sim.send("obedient", base);
    expect(second.cached).toBe(Math.floor((second.prompt - 1) / BLOCK) * BLOCK);
    expect(second.cached).toBeGreaterThan(1500);
  });

  it("one tool changed: only the blocks before the change hit", async () => {
    const changed = {
      ...requestChangesTool,
      function: { ...requestChangesTool.function, description: "Ask for changes." },
    };
    const res = await sim.send("obedient", { ...base, tools: [approveTool, escalateTool, changed] });
    expect(res.cached).toBeLessThan(400);
  });

  it("tools reordered: the history after the tools is billed again", async () => {
    const res = await sim.send("obedient", {
      ...base,
      tools: [requestChangesTool, approveTool, escalateTool],
    });
    expect(res.cached).toBeLessThan(100);
  });

  it("keys reordered inside a tool render the same (vLLM re-serializes tools), so they hit", async () => {
    const swapped = menu.map((t) => ({
      function: {
        parameters: t.function.parameters,
        description: t.function.description,
        name: t.function.name,
      },
      type: "function",
    }));
    const res = await sim.send("obedient", { ...base, tools: swapped });
    expect(res.cached).toBe(Math.floor((res.prompt - 1) / BLOCK) * BLOCK);
  });

  it("messages appended: the whole earlier prompt hits", async () => {
    const res = await sim.send("obedient", {
      ...base,
      messages: [
        ...base.messages,
        assistantCall("a1", "approve", { summary: "looks right" }),
        toolResult("a1", "approve is not allowed. Allowed now: request_changes."),
      ],
    });
    expect(res.cached).toBeGreaterThan(1500);
  });

  it("an earlier message rewritten: only the blocks before it hit", async () => {
    const res = await sim.send("obedient", {
      ...base,
      messages: [{ role: "system", content: "You review diffs carefully." }, longTurn],
    });
    expect(res.cached).toBeLessThan(BLOCK);
  });
});

describe("Qwen3 drops earlier reasoning once a new user message arrives", () => {
  const reasoned = assistantCall("r1", "request_changes", { comments: ["a", "b"] });
  const reasoning =
    "The diff has no tests. I should ask for changes, and the line says request_changes is allowed.";

  async function run(withReasoning: boolean) {
    const sim = session("qwen3");
    const first = [
      systemMessage,
      longTurn,
      withReasoning ? { ...reasoned, reasoning_content: reasoning } : reasoned,
      toolResult("r1", "Delivered. Your turn is not over. Allowed now: approve, request_changes."),
    ];
    const one = await sim.send("obedient", { tools: menu, messages: first });
    const two = await sim.send("obedient", {
      tools: menu,
      messages: [
        ...first,
        { role: "assistant", content: "Done." },
        userTurn("Allowed now: approve.", "Review again."),
      ],
    });
    await sim.app.close();
    return { one, two };
  }

  it("with reasoning echoed, the next request loses the cache from that assistant message on", async () => {
    const { one, two } = await run(true);
    const divergence = commonPrefix(one.tokens, two.tokens);
    expect(two.cached).toBeLessThanOrEqual(divergence);
    expect(one.prompt - two.cached).toBeGreaterThan(40);
  });

  it("without reasoning, the same continuation hits the whole earlier prompt", async () => {
    const { one, two } = await run(false);
    expect(two.cached).toBe(Math.floor((one.prompt - 1) / BLOCK) * BLOCK);
  });
});

describe("prefix-cache accounting against the oracle (Llama 3 template)", () => {
  const sim = session("llama3");
  afterAll(() => sim.app.close());

  it("identical, appended and rewritten conversations", async () => {
    const first = await sim.send("obedient@llama3", base);
    expect(first.cached).toBe(0);
    const again = await sim.send("obedient@llama3", base);
    expect(again.cached).toBe(Math.floor((again.prompt - 1) / BLOCK) * BLOCK);
    await sim.send("obedient@llama3", {
      ...base,
      messages: [
        ...base.messages,
        { role: "assistant", content: "I will look." },
        userTurn("Allowed now: approve."),
      ],
    });
    const rewritten = await sim.send("obedient@llama3", {
      ...base,
      messages: [{ role: "system", content: "You review diffs carefully." }, longTurn],
    });
    expect(rewritten.cached).toBeLessThan(BLOCK);
  });

  it("its template carries no tools block, so a changed tool costs nothing", async () => {
    const res = await sim.send("obedient@llama3", { ...base, tools: [requestChangesTool, approveTool] });
    expect(res.cached).toBe(Math.floor((res.prompt - 1) / BLOCK) * BLOCK);
  });
});
