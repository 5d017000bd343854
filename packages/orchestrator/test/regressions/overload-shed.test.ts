/**
 * Regression (issue 24 item 6, ADR-0286): overload without shedding. Root cause: nothing
 * refused work when the Orchestrator's event loop fell behind — 40 lanes of runs on a loaded
 * box made `/healthz` take 26–35 s and run starts answer after their clients' 30 s timeout,
 * leaving orphan runs. Now, while the loop lagged past the bound in the last second, every
 * request but `/healthz` is answered 503 `JR2_ERR_SERVICE_OVERLOADED` with `Retry-After`, before auth
 * or any store read; `/healthz` is answered.
 */
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { buildOrchestrator } from "../../src/index.js";
import { flow, INSTANCE_TOKEN } from "../http/fixture.js";

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** Keeps the event loop busy for `ms` (the work of a loaded box). */
const block = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until);
};

describe("an Orchestrator whose event loop lags (issue 24 item 6)", () => {
  it("answers 503 JR2_ERR_SERVICE_OVERLOADED with Retry-After early, and /healthz 200", async () => {
    app = await buildOrchestrator({
      workflows: new Map([["flow", flow]]),
      auth: { instanceToken: INSTANCE_TOKEN },
      shedLagMs: 200,
    });
    const auth = { authorization: `Bearer ${INSTANCE_TOKEN}` };
    expect((await app.inject({ method: "GET", url: "/runs", headers: auth })).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 250)); // a sample of the quiet loop
    block(600);
    const [runs, health] = await Promise.all([
      app.inject({ method: "GET", url: "/runs", headers: auth }),
      app.inject({ method: "GET", url: "/healthz" }),
    ]);
    expect(runs.statusCode).toBe(503);
    expect(runs.json()).toMatchObject({ code: "JR2_ERR_SERVICE_OVERLOADED" });
    expect(Number(runs.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(health.statusCode).toBe(200);
    // Once the loop kept up for a second again, requests are served.
    await new Promise((r) => setTimeout(r, 1_300));
    expect((await app.inject({ method: "GET", url: "/runs", headers: auth })).statusCode).toBe(200);
  });
});
