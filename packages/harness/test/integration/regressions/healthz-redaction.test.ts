/**
 * Regression: the open /healthz showed each endpoint's full base URL, credentials and query
 * secrets included. Root cause: the limiter is keyed by `baseUrl` and /healthz printed its keys.
 * Fixed: /healthz shows scheme, host and path only (`redactEndpoint`).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildHarness } from "../../../src/index.js";
import { type FakeOpenAI, startFakeOpenAI } from "../../fixtures/fake-openai.js";
import { type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { auth } from "../../fixtures/harness.js";

let model: FakeOpenAI;
let orch: FakeOrchestrator;
beforeEach(async () => {
  model = await startFakeOpenAI();
  orch = await startFakeOrchestrator();
});
afterEach(async () => {
  await model.close();
  await orch.close();
});

describe("/healthz endpoints", () => {
  it("name no user info and no query", async () => {
    const url = new URL(model.baseUrl);
    const secret = `http://user:pa55word@${url.host}${url.pathname}?api-key=s3cret`;
    const app = buildHarness({
      models: { sim: { baseUrl: secret, id: "sim", contextWindow: 32768, maxTokens: 100 } },
      orchestratorUrl: orch.url,
      harnessToken: auth.authorization.slice("Bearer ".length),
      sandboxToken: "",
      surfaceBudgetMs: 300,
    });
    const res = await app.inject({
      method: "POST",
      url: "/conversations/r1%2Fh/submissions",
      headers: auth,
      payload: {
        agent: "coder",
        kind: "task",
        definition: { model: "sim", instructions: "i", workspace: "none" },
        prompt: "p",
      },
    });
    expect(res.statusCode).toBe(200);
    await app.conversations.idle();
    const health = await app.inject({ method: "GET", url: "/healthz" });
    const text = health.body;
    expect(text).not.toContain("pa55word");
    expect(text).not.toContain("s3cret");
    expect(Object.keys(health.json().endpoints)).toEqual([`http://${url.host}${url.pathname}`]);
    await app.close();
  });
});
