import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY, parseModelTable, retryPolicy, toPiModel } from "../../src/provider/models.js";

const base = { baseUrl: "http://gpu:8000/v1", id: "qwen3", contextWindow: 32768, maxTokens: 4096 };

describe("the model table's issue-10 keys", () => {
  it("a retry policy overrides the defaults key by key; the Harness's timeout applies when the entry sets none", () => {
    const table = parseModelTable(JSON.stringify({ coder: { ...base, retry: { maxWaitMs: 60_000 } } }));
    expect(retryPolicy(table.coder, 120_000)).toEqual({
      ...DEFAULT_RETRY,
      maxWaitMs: 60_000,
      firstTokenTimeoutMs: 120_000,
    });
  });

  it("an unknown retry key is refused, naming where", () => {
    expect(() => parseModelTable(JSON.stringify({ coder: { ...base, retry: { maxWait: 1 } } }))).toThrow(
      /coder\.retry/,
    );
  });

  it("a thinking format pi-ai does not know is refused", () => {
    expect(() =>
      parseModelTable(JSON.stringify({ coder: { ...base, compat: { thinkingFormat: "qwen3" } } })),
    ).toThrow(/qwen-chat-template/);
  });

  it("reasoning defaults to true with a thinking format, false without", () => {
    const t = parseModelTable(
      JSON.stringify({ q: { ...base, compat: { thinkingFormat: "qwen-chat-template" } }, p: base }),
    );
    expect(toPiModel("q", t.q!).reasoning).toBe(true);
    expect(toPiModel("p", t.p!).reasoning).toBe(false);
  });
});
