import { describe, expect, it } from "vitest";
import { PrefixCache } from "../../src/prefix-cache.js";

const range = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);

describe("PrefixCache", () => {
  it("recomputes the last prompt token: a repeated 32-token prompt hits one block, not two", () => {
    const cache = new PrefixCache(16, 100);
    expect(cache.lookupAndInsert(range(32)).cachedTokens).toBe(0);
    expect(cache.lookupAndInsert(range(32))).toEqual({ promptTokens: 32, cachedTokens: 16 });
    expect(cache.lookupAndInsert(range(33)).cachedTokens).toBe(32);
  });

  it("chains blocks: a block after a differing block never hits, even with equal tokens", () => {
    const cache = new PrefixCache(4, 100);
    cache.lookupAndInsert([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(cache.lookupAndInsert([0, 2, 3, 4, 5, 6, 7, 8, 9]).cachedTokens).toBe(0);
  });

  it("evicts the least recently used blocks past its capacity", () => {
    const cache = new PrefixCache(4, 3);
    cache.lookupAndInsert(range(13)); // 3 full blocks
    cache.lookupAndInsert(range(13, 100)); // 3 other blocks evict the first 3
    expect(cache.size).toBe(3);
    expect(cache.lookupAndInsert(range(13)).cachedTokens).toBe(0);
  });

  it("keeps prompts with different salts apart", () => {
    const cache = new PrefixCache(4, 100);
    cache.lookupAndInsert(range(9), "qwen3:");
    expect(cache.lookupAndInsert(range(9), "llama3:").cachedTokens).toBe(0);
    expect(cache.lookupAndInsert(range(9), "qwen3:").cachedTokens).toBe(8);
  });
});
