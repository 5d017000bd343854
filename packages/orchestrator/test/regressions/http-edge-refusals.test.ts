/**
 * Regressions (breaker items 10, 13, 14, 15, 19): refusals at the HTTP edge that answered the
 * wrong code or none.
 * - 10: a URL the router cannot read (`%ff`, a 3000-char segment) answered Fastify's own
 *   `FST_ERR_BAD_URL` / `FST_ERR_MAX_PARAM_LENGTH` body — router errors skip the error handler;
 *   they now go through `frameworkErrors`.
 * - 13: a `__proto__` / `constructor.prototype` key answered "not valid JSON": secure-json-parse
 *   refused it and Fastify reported every refusal as invalid JSON. Our own parser names the key.
 * - 14: `{"task":5}` without the `{input}` wrapper started a run with the default input:
 *   StartRunRequest was not strict.
 * - 15: a 409 for a settled run carried no `acceptsNow`, though §6 reads 409 as "with acceptsNow".
 * - 19: a `text/plain` body reached the route (Fastify's built-in text parser) and answered 400;
 *   `Bearer tok extra` answered AUTH_MISSING although a bearer credential was sent.
 */
import type { FastifyInstance, InjectOptions } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentUrl, buildTestApp, call, INSTANCE_TOKEN, startFlow } from "../http/fixture.js";

let app: FastifyInstance;
beforeEach(async () => {
  app = await buildTestApp();
});
afterEach(async () => {
  await app.close();
});

/** Sends a raw body (the text as given, not re-serialized) with the instance token. */
async function raw(
  method: InjectOptions["method"],
  url: string,
  payload: string,
  contentType = "application/json",
) {
  const res = await app.inject({
    method,
    url,
    payload,
    headers: { authorization: `Bearer ${INSTANCE_TOKEN}`, "content-type": contentType },
  });
  return { status: res.statusCode, body: res.json() };
}

describe("URLs the router cannot read (item 10)", () => {
  it("bad percent-encoding answers 400 JR2_ERR_REQUEST_INVALID naming the path", async () => {
    const res = await call(app, "GET", "/runs/%ff%fe");
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: "JR2_ERR_REQUEST_INVALID" });
    expect(res.body.error).toContain("is not valid percent-encoding");
  });

  it("a segment past the router's limit answers 400 JR2_ERR_REQUEST_INVALID, with the path cut short", async () => {
    const res = await call(app, "GET", `/agents/${"a".repeat(3000)}/surface`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: "JR2_ERR_REQUEST_INVALID" });
    expect(res.body.error).toContain("longer than 2048 characters");
    expect(res.body.error.length).toBeLessThan(300);
  });
});

describe("prototype-polluting keys are refused by name (item 13)", () => {
  it("in run input", async () => {
    const res = await raw(
      "POST",
      "/workflows/flow/runs",
      '{"input":{"task":"t","__proto__":{"admin":true}}}',
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: "JR2_ERR_REQUEST_INVALID",
      key: "__proto__",
      path: "input.__proto__",
    });
    expect(res.body.error).toContain("key `__proto__` is not accepted");
  });

  it("in pick arguments: a 400 naming the key, not MALFORMED_JSON", async () => {
    const { iid } = await startFlow(app);
    const res = await raw(
      "POST",
      agentUrl(iid, "picks"),
      '{"name":"note","arguments":{"constructor":{"prototype":{"x":1}}},"toolCallId":"c1"}',
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: "JR2_ERR_REQUEST_INVALID", key: "constructor.prototype" });
    expect(res.body.error).toContain(
      "key `constructor.prototype` is not accepted (at `arguments.constructor.prototype`)",
    );
  });

  it("in a Gate payload, nested in an array", async () => {
    const { runId } = await startFlow(app);
    const res = await raw(
      "POST",
      `/runs/${runId}/gates/review_gate/events`,
      '{"type":"reject","reason":[{"__proto__":1}]}',
    );
    expect(res.body).toMatchObject({ code: "JR2_ERR_REQUEST_INVALID", path: "reason[0].__proto__" });
  });

  it("a plain `constructor` key is data, and malformed JSON is still MALFORMED_JSON", async () => {
    const started = await raw("POST", "/workflows/flow/runs", '{"input":{"task":"constructor"}}');
    expect(started.status).toBe(201);
    const bad = await raw("POST", "/workflows/flow/runs", '{"input":');
    expect(bad).toMatchObject({ status: 400, body: { code: "JR2_ERR_REQUEST_MALFORMED_JSON" } });
  });
});

describe("StartRunRequest is strict (item 14)", () => {
  it("input without the `{input}` wrapper answers 400 naming the key and the wrapper; no run starts", async () => {
    const res = await call(app, "POST", "/workflows/flow/runs", { task: 5 });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("JR2_ERR_REQUEST_INVALID");
    expect(res.body.error).toContain("unknown key `task`");
    expect(res.body.error).toContain('{ "input":');
    expect((await call(app, "GET", "/runs")).body).toEqual([]);
  });
});

describe("every 409 carries acceptsNow (item 15)", () => {
  it("a Gate event on a settled run answers 409 RUN_NOT_LIVE with acceptsNow [] and the run's status", async () => {
    const { runId, iid } = await startFlow(app);
    await call(app, "POST", agentUrl(iid, "picks"), {
      name: "finish",
      arguments: { summary: "s" },
      toolCallId: "f",
    });
    await call(app, "POST", `/runs/${runId}/cancel`);
    const res = await call(app, "POST", `/runs/${runId}/gates/review_gate/events`, { type: "approve" });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: "JR2_ERR_RUN_NOT_LIVE", acceptsNow: [], status: "cancelled" });
    const again = await call(app, "POST", `/runs/${runId}/cancel`);
    expect(again).toMatchObject({ status: 409, body: { acceptsNow: [], status: "cancelled" } });
  });
});

describe("media types and bearer credentials (item 19)", () => {
  it("a text/plain body on a JSON route answers 415 naming the content type", async () => {
    const res = await raw("POST", "/workflows/flow/runs", '{"input":{"task":"t"}}', "text/plain");
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({
      code: "JR2_ERR_REQUEST_UNSUPPORTED_MEDIA_TYPE",
      contentType: "text/plain",
    });
  });

  it("`Bearer tok extra` is a bearer credential that is not valid; a lower-case scheme is accepted", async () => {
    const extra = await app.inject({
      method: "GET",
      url: "/runs",
      headers: { authorization: `Bearer ${INSTANCE_TOKEN} extra` },
    });
    expect(extra.json()).toMatchObject({ code: "JR2_ERR_AUTH_INVALID" });
    const lower = await app.inject({
      method: "GET",
      url: "/runs",
      headers: { authorization: `bearer ${INSTANCE_TOKEN}` },
    });
    expect(lower.statusCode).toBe(200);
    const bare = await app.inject({ method: "GET", url: "/runs", headers: { authorization: "Bearer" } });
    expect(bare.json()).toMatchObject({ code: "JR2_ERR_AUTH_MISSING" });
  });
});
