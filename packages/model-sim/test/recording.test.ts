import { buildModelSim } from "@jr2/model-sim";
import { afterAll, describe, expect, it } from "vitest";
import { chat, menu, systemMessage, userTurn } from "./fixtures.js";

const { app } = buildModelSim();
afterAll(() => app.close());

describe("recording", () => {
  it("keeps every body byte-exact — key order, spacing and unicode escapes as sent", async () => {
    const raw = `{ "messages": [${JSON.stringify(systemMessage)}, {"role":"user","content":"caf\\u00e9 Allowed now: approve."}],\n  "model":"obedient", "tools": ${JSON.stringify(menu)} }`;
    const res = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      headers: { "content-type": "application/json" },
      payload: raw,
    });
    expect(res.statusCode).toBe(200);
    const recorded = (await app.inject({ method: "GET", url: "/_sim/requests" })).json();
    expect(recorded.at(-1).raw).toBe(raw);
    expect(recorded.at(-1)).toMatchObject({ model: "obedient", status: 200, error: null });
    expect(recorded.at(-1).usage).toEqual(res.json().usage);
  });

  it("numbers requests, totals them at /_sim/stats, and forgets them on DELETE", async () => {
    await app.inject({ method: "DELETE", url: "/_sim/requests" });
    const body = {
      model: "obedient",
      messages: [systemMessage, userTurn("Allowed now: approve.")],
      tools: menu,
    };
    const first = (await chat(app, body)).json().usage;
    const second = (await chat(app, body)).json().usage;
    const recorded = (await app.inject({ method: "GET", url: "/_sim/requests" })).json();
    expect(recorded.map((r: { seq: number }) => r.seq)).toEqual([1, 2]);
    const stats = (await app.inject({ method: "GET", url: "/_sim/stats" })).json();
    expect(stats).toMatchObject({
      requests: 2,
      refused: 0,
      promptTokens: first.prompt_tokens + second.prompt_tokens,
      cachedTokens: first.prompt_tokens_details.cached_tokens + second.prompt_tokens_details.cached_tokens,
    });
    expect(stats.cachedTokens).toBeGreaterThan(0);
    expect((await app.inject({ method: "DELETE", url: "/_sim/requests" })).statusCode).toBe(204);
    expect((await app.inject({ method: "GET", url: "/_sim/requests" })).json()).toEqual([]);
  });

  it("forgets cached blocks on DELETE /_sim/cache", async () => {
    const body = {
      model: "obedient",
      messages: [systemMessage, userTurn("Allowed now: approve.", "Fresh prompt.")],
      tools: menu,
    };
    await chat(app, body);
    expect((await app.inject({ method: "DELETE", url: "/_sim/cache" })).statusCode).toBe(204);
    expect((await chat(app, body)).json().usage.prompt_tokens_details.cached_tokens).toBe(0);
  });

  it("answers without streaming as one chat.completion", async () => {
    const res = await chat(app, {
      model: "obedient",
      messages: [systemMessage, userTurn("Allowed now: approve.")],
      tools: menu,
    });
    const body = res.json();
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    expect(body.choices[0].message.tool_calls[0].function.name).toBe("approve");
    expect(JSON.parse(body.choices[0].message.tool_calls[0].function.arguments)).toEqual({
      summary: "example summary",
    });
  });

  it("lists the policies at /v1/models", async () => {
    const ids = (await app.inject({ method: "GET", url: "/v1/models" }))
      .json()
      .data.map((m: { id: string }) => m.id);
    expect(ids).toEqual(expect.arrayContaining(["obedient", "worker", "script", "dropper"]));
  });
});
