// KV scheduling's defaults (issue 30 Rules): on only for entries with kvTokens, said once at start
// per entry either way; entries sharing an endpoint share one working set; vLLM's /metrics URL.
import { describe, expect, it } from "vitest";
import type { ModelTable } from "../../src/provider/models.js";
import { ModelTable as ModelTableSchema } from "../../src/provider/models.js";
import { createKvScheduling } from "../../src/provider/scheduling/kv-scheduling.js";
import { metricsUrl } from "../../src/provider/scheduling/vllm-metrics.js";

const entry = (baseUrl: string, extra: Record<string, unknown> = {}) => ({
  baseUrl,
  id: "m",
  contextWindow: 32768,
  maxTokens: 1024,
  ...extra,
});

describe("KV scheduling per model entry", () => {
  it("is off for entries without kvTokens and on for the others, each said once at start", async () => {
    const models: ModelTable = ModelTableSchema.parse({
      plain: entry("http://a:8000/v1"),
      coder: entry("http://gpu:8000/v1", { kvTokens: 48000 }),
      reviewer: entry("http://gpu:8000/v1", { kvTokens: 48000 }),
    });
    const notices: string[] = [];
    const kv = createKvScheduling({ models, notice: (m) => notices.push(m) });
    try {
      expect(notices).toEqual([
        "KV scheduling off for model plain (no kvTokens): its requests go first come first served, as before",
        "KV scheduling on for model coder: 48000 tokens of KV",
        "KV scheduling on for model reviewer: shares its endpoint's working set (48000 tokens, set by the first entry on it)",
      ]);
      const none = () => {};
      expect(kv.conversation("r/plain/1", models.plain!, none, none)).toBeUndefined();
      const coder = kv.conversation("r/coder/1", models.coder!, none, none)!;
      const reviewer = kv.conversation("r/reviewer/1", models.reviewer!, none, none)!;
      await coder.enter({ messages: ["x".repeat(35_000)] }, 1024);
      await reviewer.enter({ messages: ["y".repeat(35_000)] }, 1024);
      // One set for the shared endpoint: both conversations in it.
      expect(kv.snapshot()).toEqual({
        "http://gpu:8000/v1": { members: 2, waiting: 0, usedTokens: expect.any(Number), budgetTokens: 48000 },
      });
    } finally {
      kv.close();
    }
  });

  it('refuses a kvTokens that is neither a positive whole number nor "auto"', () => {
    expect(ModelTableSchema.safeParse({ m: entry("http://a/v1", { kvTokens: 0 }) }).success).toBe(false);
    expect(ModelTableSchema.safeParse({ m: entry("http://a/v1", { kvTokens: "lots" }) }).success).toBe(false);
    expect(ModelTableSchema.safeParse({ m: entry("http://a/v1", { kvTokens: "auto" }) }).success).toBe(true);
  });

  it("reads vLLM's /metrics beside its OpenAI base URL", () => {
    expect(metricsUrl("http://gpu:8000/v1")).toBe("http://gpu:8000/metrics");
    expect(metricsUrl("http://gpu:8000/v1/")).toBe("http://gpu:8000/metrics");
  });
});
