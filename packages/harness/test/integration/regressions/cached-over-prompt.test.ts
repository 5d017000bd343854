/**
 * Regression (issue 25 §6): a server reporting `cached_tokens` over `prompt_tokens` was shown as
 * `cached 150 (150%)` and a run total of `1930%`. Root cause: the number was taken as reported.
 * Fixed: an impossible cached count reads as unreported (the placeholder older readers show as
 * `?`), named in the usage event's optional `misreported`, and one warn line per model entry.
 * Bytes: hand-written OpenAI usage chunk (`usage.prompt_tokens_details.cached_tokens`).
 */
import type { StreamEvent } from "@jr2/wire";
import { readUsage } from "@jr2/wire";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeOrchestrator,
  answer as pickAnswer,
  startFakeOrchestrator,
} from "../../fixtures/fake-orchestrator.js";
import {
  answer,
  chunk,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../fixtures/scripted-upstream.js";
import { upstreamHarness } from "../../fixtures/upstream-harness.js";

let upstream: ScriptedUpstream;
let orch: FakeOrchestrator;
beforeEach(async () => {
  upstream = await startScriptedUpstream();
  orch = await startFakeOrchestrator();
  orch.answer = () => pickAnswer({ allowed: ["approve"], turnComplete: false });
});
afterEach(async () => {
  await upstream.close();
  await orch.close();
});

const over = chunk([], {
  usage: { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 150 } },
});

describe("cached tokens over the prompt tokens", () => {
  it("read as unreported and misreported; one warn line for the model entry across answers", async () => {
    upstream.script([
      { sse: answer({ toolCalls: [{ name: "approve", arguments: '{"summary":"a"}' }], usage: over }) },
      { sse: answer({ content: "I have finished.", usage: over }) },
    ]);
    const h = upstreamHarness(upstream, orch);
    const { settlement, events } = await h.run("r1/coder/cached-over");
    expect(settlement.outcome).toBe("completed");
    const usage = events.filter((e): e is Extract<StreamEvent, { type: "usage" }> => e.type === "usage");
    expect(usage).toHaveLength(2);
    for (const u of usage) {
      expect(u).toMatchObject({ promptTokens: 100, completionTokens: 7, misreported: ["cachedTokens"] });
      expect(u.unreported).toContain("cachedTokens");
      expect(readUsage(u).cachedTokens).toBeNull();
    }
    expect(
      h.warns().filter((l) => String(l.msg).includes("more cached tokens than prompt tokens")),
    ).toHaveLength(1);
  });
});
