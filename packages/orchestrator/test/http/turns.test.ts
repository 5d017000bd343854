/**
 * `GET /runs/:runId/turns` and `GET /runs/:runId/turns/:turnId` (ADR-0257): the run's Turns
 * with the pick that ended each (its arguments as delivered), one Turn's transcript (empty
 * for a hand-played Turn: no Harness streamed it), the instance token like `GET /runs/:runId`,
 * and 404s naming the unknown run or Turn.
 */
import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mintSandboxToken } from "../../src/index.js";
import { agentUrl, buildTestApp, call, expectCoded, SANDBOX_KEY, startFlow } from "./fixture.js";

let app: FastifyInstance;
beforeEach(async () => {
  app = await buildTestApp();
});
afterEach(async () => {
  await app.close();
});

describe("the Turn routes", () => {
  it("list the Turns in start order with the pick that ended one, and serve one Turn", async () => {
    const { runId, iid } = await startFlow(app);
    const running = await call(app, "GET", `/runs/${runId}/turns`);
    expect(running.status).toBe(200);
    expect(running.body.turns).toEqual([
      expect.objectContaining({
        agent: "worker",
        state: "working",
        outcome: "running",
        endedAt: null,
        pick: null,
      }),
    ]);
    const turnId = running.body.turns[0].turnId as string;

    // An in-state move: the Turn goes on, its newest pick shown.
    await call(app, "POST", agentUrl(iid, "picks"), { name: "note", arguments: {}, toolCallId: "c0" });
    expect((await call(app, "GET", `/runs/${runId}/turns`)).body.turns[0]).toMatchObject({
      outcome: "running",
      pick: { name: "note" },
    });
    const picked = await call(app, "POST", agentUrl(iid, "picks"), {
      name: "finish",
      arguments: { summary: "done it" },
      toolCallId: "c1",
    });
    expect(picked.body).toMatchObject({ delivered: true, moved: true });
    const after = await call(app, "GET", `/runs/${runId}/turns`);
    expect(after.body.turns[0]).toMatchObject({
      turnId,
      outcome: "picked",
      pick: { name: "finish", arguments: { summary: "done it" } },
      usage: { requests: 0 },
    });
    expect(after.body.turns[0].endedAt).toEqual(expect.any(String));

    const one = await call(app, "GET", `/runs/${runId}/turns/${turnId}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ turnId, agent: "worker", prefix: null, entries: [] });
  });

  it("answer 404 naming an unknown run or Turn", async () => {
    const { runId } = await startFlow(app);
    const noRun = await call(app, "GET", "/runs/nope/turns");
    expectCoded(noRun, "JR2_ERR_RUN_NOT_FOUND");
    expect(noRun.body.error).toContain("nope");
    expectCoded(await call(app, "GET", "/runs/nope/turns/t1"), "JR2_ERR_RUN_NOT_FOUND");
    const noTurn = await call(app, "GET", `/runs/${runId}/turns/t-unknown`);
    expectCoded(noTurn, "JR2_ERR_RUN_TURN_NOT_FOUND");
    expect(noTurn.body.error).toContain("t-unknown");
    expect(noTurn.body.error).toContain(runId);
  });

  it("take the instance token, like GET /runs/:runId", async () => {
    const { runId } = await startFlow(app);
    expectCoded(await call(app, "GET", `/runs/${runId}/turns`, undefined, null), "JR2_ERR_AUTH_MISSING");
    expectCoded(await call(app, "GET", `/runs/${runId}/turns/x`, undefined, "wrong"), "JR2_ERR_AUTH_INVALID");
    const sandbox = mintSandboxToken(SANDBOX_KEY, "ws-1");
    expectCoded(await call(app, "GET", `/runs/${runId}/turns`, undefined, sandbox), "JR2_ERR_AUTH_INVALID");
  });
});
