import { describe, expect, it } from "vitest";
import { cacheRate } from "../src/usage.js";

describe("cacheRate", () => {
  it("is the cached share of the reporting requests' prompt tokens, and unknown without any", () => {
    const base = { promptTokens: null, cachedTokens: null, completionTokens: null };
    expect(cacheRate({ ...base, reported: { promptTokens: 10687, cachedTokens: 7136 } })).toBe("67%");
    expect(cacheRate(base)).toBe("unknown");
    expect(cacheRate({ ...base, reported: { promptTokens: 0, cachedTokens: 0 } })).toBe("unknown");
  });
});
