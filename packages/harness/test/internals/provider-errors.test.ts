import { describe, expect, it } from "vitest";
import { newProbe } from "../../src/provider/fetch-probe.js";
import { chatUrl, classify, readErrorBody, withoutServerText } from "../../src/provider/provider-errors.js";

const site = {
  entry: "coder",
  id: "qwen3",
  baseUrl: "http://u:p@gpu:8000/v1?key=k",
  maxTokens: 1024,
  contextWindow: 8192,
};
const probe = (p: Partial<ReturnType<typeof newProbe>>) => ({ ...newProbe(), url: "x", ...p });

describe("classify", () => {
  it.each([
    [{ status: 503 }, "wait", "unavailable"],
    [{ status: 429, retryAfterMs: 2000 }, "wait", "unavailable"],
    [{ transportError: "ECONNREFUSED", networkError: true }, "wait", "unavailable"],
    [{ status: 200, bytes: 40, bodyError: "UND_ERR_SOCKET" }, "retry", "stream-cut"],
    [{ status: 200, sawFinishReason: true, finishReason: "abort" }, "retry", "stream-cut"],
    [{ status: 200, bytes: 40 }, "retry", "stream-cut"],
    [{ status: 500, errorBody: "{}" }, "retry", "stream-cut"],
    [{ status: 401, errorBody: "" }, "fatal", "bad-request"],
    [
      {
        transportError: "Request cannot be constructed from a URL that includes credentials",
        networkError: false,
      },
      "fatal",
      "bad-request",
    ],
  ])("%j → %s %s", (p, kind, cause) => {
    expect(classify(probe(p), undefined, site)).toMatchObject({ kind, cause });
  });

  it("a 429's Retry-After is the wait", () => {
    expect(classify(probe({ status: 429, retryAfterMs: 2000 }), undefined, site)).toMatchObject({
      retryAfterMs: 2000,
    });
  });

  it("names the endpoint without its user info or query, and the model entry", () => {
    const v = classify(probe({ status: 503 }), undefined, site);
    expect(v.message).toContain("http://gpu:8000/v1/chat/completions (model entry `coder`, id `qwen3`)");
    expect(v.message).not.toContain("u:p");
    expect(v.message).not.toContain("key=k");
  });
});

describe("readErrorBody", () => {
  it("reads vLLM's top-level body and the nested form", () => {
    expect(
      readErrorBody('{"object":"error","message":"m1","type":"BadRequestError","param":null,"code":400}'),
    ).toEqual({ text: "m1", type: "BadRequestError" });
    expect(readErrorBody('{"error":{"code":400,"message":"m2","type":"exceed_context_size_error"}}')).toEqual(
      { text: "m2", type: "exceed_context_size_error" },
    );
    expect(readErrorBody("upstream exploded").text).toBe("upstream exploded");
  });

  it("log lines drop the server's words", () => {
    expect(withoutServerText("model request to x: HTTP 503 — the prompt was …")).toBe(
      "model request to x: HTTP 503",
    );
  });

  it("chatUrl appends the route once", () => {
    expect(chatUrl("http://h:1/v1/")).toBe("http://h:1/v1/chat/completions");
  });
});
