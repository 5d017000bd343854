/**
 * Regression (issue 10 §2, case C8): usage the server did not report was sent as 0 — a usage
 * chunk without `prompt_tokens_details` (vLLM without `--enable-prompt-tokens-details`) read as
 * `cached 0 (0%)`, a missing usage chunk as `prompt 0`. Root cause: pi-ai defaults every missing
 * field to 0. Fixed: the Harness reads the usage the wire carried; a field not reported is named
 * in `unreported` (ADR-0400) and reads as null; llama-server's `timings.cache_n` is read where
 * `cached_tokens` is absent. llama-server streams are recorded; vLLM's C8 chunk is hand-written.
 */
import { readUsage, type StreamEvent } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import type { FakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { answer, chunk, type ScriptedUpstream } from "../../fixtures/scripted-upstream.js";
import { upstreamHarness } from "../../fixtures/upstream-harness.js";
import { upstreamPerTest } from "../../fixtures/upstream-per-test.js";

let upstream: ScriptedUpstream;
let orch: FakeOrchestrator;
upstreamPerTest((pair) => ({ upstream, orch } = pair));

const usageEvents = (events: StreamEvent[]) =>
  events.filter((e): e is Extract<StreamEvent, { type: "usage" }> => e.type === "usage");
const approve = [{ name: "approve", arguments: '{"summary":"ok"}' }];

describe("usage a server did not report is unknown, never 0", () => {
  it("C8: a usage chunk without prompt_tokens_details (vLLM, hand-written) → cachedTokens unreported, read as null", async () => {
    const h = upstreamHarness(upstream, orch);
    const c8 = chunk([], { usage: { prompt_tokens: 472, completion_tokens: 12, total_tokens: 484 } });
    upstream.script([{ sse: answer({ toolCalls: approve, usage: c8 }) }]);
    const { events } = await h.run("r1/coder/c8");
    const [u] = usageEvents(events);
    expect(u).toMatchObject({
      promptTokens: 472,
      completionTokens: 12,
      unreported: ["cachedTokens"],
      finishReason: "tool_calls",
    });
    expect(readUsage(u!)).toEqual({ promptTokens: 472, cachedTokens: null, completionTokens: 12 });
  });

  it("no usage chunk and no timings → all three unreported", async () => {
    const h = upstreamHarness(upstream, orch);
    upstream.script([{ sse: answer({ toolCalls: approve, usage: null }) }]);
    const { events } = await h.run("r1/coder/nousage");
    const [u] = usageEvents(events);
    expect(u?.unreported).toEqual(["promptTokens", "cachedTokens", "completionTokens"]);
    expect(readUsage(u!)).toEqual({ promptTokens: null, cachedTokens: null, completionTokens: null });
  });

  it("llama-server's usage chunk (recorded c1_stream's) → cached_tokens read, nothing unreported", async () => {
    const h = upstreamHarness(upstream, orch);
    upstream.script([{ sse: answer({ toolCalls: approve }) }]);
    const { events } = await h.run("r1/coder/c1");
    const [u] = usageEvents(events);
    expect(u).toEqual(expect.objectContaining({ promptTokens: 568, cachedTokens: 567, completionTokens: 8 }));
    expect(u?.unreported).toBeUndefined();
  });

  it("usage without cached_tokens beside llama-server timings → timings.cache_n is the cached count", async () => {
    const h = upstreamHarness(upstream, orch);
    const withTimings = chunk([], {
      usage: { prompt_tokens: 568, completion_tokens: 8, total_tokens: 576 },
      timings: { cache_n: 512, prompt_n: 56, predicted_n: 8 },
    });
    upstream.script([{ sse: answer({ toolCalls: approve, usage: withTimings }) }]);
    const { events } = await h.run("r1/coder/timings");
    expect(readUsage(usageEvents(events)[0]!)).toEqual({
      promptTokens: 568,
      cachedTokens: 512,
      completionTokens: 8,
    });
  });

  it("llama-server without include_usage (recorded r2_stream_nousage): the usage is read from timings", async () => {
    const h = upstreamHarness(upstream, orch);
    upstream.script([{ recorded: "r2_stream_nousage" }, { sse: answer({ toolCalls: approve }) }]);
    const { events } = await h.run("r1/coder/r2");
    const [u] = usageEvents(events);
    expect(u).toMatchObject({
      promptTokens: 568,
      cachedTokens: 567,
      completionTokens: 8,
      finishReason: "length",
    });
    expect(u?.unreported).toBeUndefined();
  });
});
