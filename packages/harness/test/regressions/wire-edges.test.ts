/**
 * Regression: the Harness wire answered edge requests with the wrong code or not at all
 * (adversarial test, items 3, 5, 8, 10, 11, 12, 16, 19).
 * Root causes: Fastify defaults were left in place (maxParamLength 100 refused long iids; the
 * 1 MiB body limit sat below what an Orchestrator may send; framework errors answered
 * Fastify's own body); the model check indexed the table with `models[name]`, so Object's
 * prototype members passed; the error handler mapped every validation error to the Submission
 * code and every unknown Fastify error to 500 with its message; the bearer scheme was matched
 * case-sensitively; the admission schema refused unknown notice types (against §7.6).
 * Fixed in server.ts (limits, frameworkErrors), routes/errors.ts, routes/auth.ts,
 * routes/notices.ts, models.ts (`modelEntry`, Object.hasOwn).
 */
import { describe, expect, it } from "vitest";
import { HARNESS_BODY_LIMIT } from "../../src/index.js";
import { auth, offlineHarness, submission, TOKEN } from "../fixtures/offline-harness.js";

describe("long iids (item 3)", () => {
  it("admits and streams a conversation whose iid is 600 characters", async () => {
    const app = offlineHarness();
    const iid = `run-1/${"a".repeat(600)}`;
    const url = `/conversations/${encodeURIComponent(iid)}`;
    const admitted = await app.inject({
      method: "POST",
      url: `${url}/submissions`,
      headers: auth,
      payload: submission(),
    });
    expect(admitted.statusCode).toBe(200);
    const stream = await app.inject({ method: "GET", url: `${url}/stream?offset=0`, headers: auth });
    expect(stream.statusCode).toBe(200);
    await app.conversations.idle();
    await app.close();
  });
});

describe("Object's members are not models (item 5)", () => {
  it.each(["toString", "__proto__", "constructor", "hasOwnProperty"])(
    "`%s` answers 400 JR2_ERR_MODEL_UNKNOWN and /healthz gains no endpoint",
    async (name) => {
      const app = offlineHarness();
      const res = await app.inject({
        method: "POST",
        url: "/conversations/r1%2Fm/submissions",
        headers: { ...auth, "content-type": "application/json" },
        // Written by hand: an object literal's `__proto__` key would set the prototype instead.
        payload: `{"agent":"coder","kind":"task","prompt":"p","definition":{"model":"sim","instructions":"i","workspace":"none"},"model":${JSON.stringify(name)}}`,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: "JR2_ERR_MODEL_UNKNOWN", model: name, known: ["sim"] });
      const health = await app.inject({ method: "GET", url: "/healthz" });
      expect(health.json().endpoints).toEqual({});
      await app.close();
    },
  );
});

describe("content types (item 8)", () => {
  it("a form body or no content type answers 415 naming it, not 500", async () => {
    const app = offlineHarness();
    const form = await app.inject({
      method: "POST",
      url: "/conversations/r1%2Fc/submissions",
      headers: { ...auth, "content-type": "application/x-www-form-urlencoded" },
      payload: "a=b",
    });
    expect(form.statusCode).toBe(415);
    expect(form.json()).toMatchObject({
      code: "JR2_ERR_REQUEST_UNSUPPORTED_MEDIA_TYPE",
      contentType: "application/x-www-form-urlencoded",
    });
    const text = await app.inject({
      method: "POST",
      url: "/conversations/r1%2Fc/submissions",
      headers: { ...auth, "content-type": "text/plain" },
      payload: "hello",
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe("JR2_ERR_REQUEST_UNSUPPORTED_MEDIA_TYPE");
    const none = await app.inject({
      method: "POST",
      url: "/conversations/r1%2Fc/submissions",
      headers: auth,
      body: Buffer.from("a=b"),
    });
    expect(none.statusCode).toBe(415);
    expect(none.json()).toMatchObject({
      code: "JR2_ERR_REQUEST_UNSUPPORTED_MEDIA_TYPE",
      contentType: "(none)",
    });
    await app.close();
  });
});

describe("malformed paths (item 10)", () => {
  it("a path that does not decode and a parameter over the limit answer 400 JR2_ERR_REQUEST_INVALID", async () => {
    const app = offlineHarness();
    for (const url of ["/conversations/%ff/history", "/conversations/%ff%fe/stream"]) {
      const res = await app.inject({ method: "GET", url, headers: auth });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: "JR2_ERR_REQUEST_INVALID" });
    }
    const long = await app.inject({
      method: "GET",
      url: `/conversations/${"x".repeat(5000)}/history`,
      headers: auth,
    });
    expect(long.statusCode).toBe(400);
    expect(long.json().code).toBe("JR2_ERR_REQUEST_INVALID");
    expect(long.json().error).toContain("4096");
    await app.close();
  });
});

describe("stream query errors (item 11)", () => {
  it("`wait=61` is a bad request naming `wait`, not an invalid Submission", async () => {
    const app = offlineHarness();
    const res = await app.inject({
      method: "GET",
      url: "/conversations/r1%2Fs/stream?offset=0&wait=61",
      headers: auth,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "JR2_ERR_REQUEST_INVALID", field: "wait" });
    await app.close();
  });
});

describe("body limit (item 12)", () => {
  it("admits a 2 MiB prompt; a body over the limit answers 413 naming the limit in bytes", async () => {
    const app = offlineHarness();
    const big = await app.inject({
      method: "POST",
      url: "/conversations/r1%2Fbig/submissions",
      headers: auth,
      payload: submission({ prompt: "x".repeat(2 * 1024 * 1024) }),
    });
    expect(big.statusCode).toBe(200);
    const over = await app.inject({
      method: "POST",
      url: "/conversations/r1%2Fover/submissions",
      headers: auth,
      payload: submission({ prompt: "x".repeat(HARNESS_BODY_LIMIT) }),
    });
    expect(over.statusCode).toBe(413);
    expect(over.json()).toMatchObject({ code: "JR2_ERR_REQUEST_TOO_LARGE", limit: HARNESS_BODY_LIMIT });
    expect(over.json().error).toContain(String(HARNESS_BODY_LIMIT));
    expect(HARNESS_BODY_LIMIT).toBeGreaterThanOrEqual(8 * 1024 * 1024);
    await app.conversations.idle();
    await app.close();
  });
});

describe("notice tolerance (item 16)", () => {
  it("an unknown notice type is skipped and the Submission admitted; a known one with a bad shape is refused", async () => {
    const app = offlineHarness();
    const newer = await app.inject({
      method: "POST",
      url: "/conversations/r1%2Fn/submissions",
      headers: auth,
      payload: submission({ notices: [{ type: "conversation-new" }, { type: "from-the-future", x: 1 }] }),
    });
    expect(newer.statusCode).toBe(200);
    const bad = await app.inject({
      method: "POST",
      url: "/conversations/r1%2Fn2/submissions",
      headers: auth,
      payload: submission({ notices: [{ type: "pick-answer" }] }),
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("JR2_ERR_SUBMISSION_INVALID");
    await app.conversations.idle();
    await app.close();
  });
});

describe("the bearer scheme (item 19)", () => {
  it("is case-insensitive; the token is not", async () => {
    const app = offlineHarness();
    for (const scheme of ["bearer", "BEARER", "Bearer"]) {
      const res = await app.inject({
        method: "GET",
        url: "/conversations/none/history",
        headers: { authorization: `${scheme} ${TOKEN}` },
      });
      expect(res.statusCode).toBe(404);
    }
    const wrong = await app.inject({
      method: "GET",
      url: "/conversations/none/history",
      headers: { authorization: `bearer ${TOKEN.toUpperCase()}` },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().code).toBe("JR2_ERR_AUTH_INVALID");
    await app.close();
  });
});
