/**
 * `POST /runs/:runId/resume` and `POST /runs/:runId/retry` (ADR-0271) at the HTTP edge: the
 * instance token only, coded refusals for a run that is not drifted / has nothing to retry, an
 * unknown run, and an unknown body key. The controls themselves: test/resume-drifted.test.ts,
 * test/retry-faulted.test.ts and the integration test on the built binaries.
 */
import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mintSandboxToken } from "../../src/index.js";
import { buildTestApp, call, expectCoded, SANDBOX_KEY, startFlow } from "./fixture.js";

let app: FastifyInstance;
beforeEach(async () => {
  app = await buildTestApp();
});
afterEach(async () => {
  await app.close();
});

describe("the resume and retry routes", () => {
  it("take the instance token only: none is 401 missing, a sandbox token 401 invalid", async () => {
    const { runId } = await startFlow(app);
    const sandbox = mintSandboxToken(SANDBOX_KEY, "ws-1");
    for (const what of ["resume", "retry"]) {
      expectCoded(await call(app, "POST", `/runs/${runId}/${what}`, {}, null), "JR2_ERR_AUTH_MISSING");
      expectCoded(await call(app, "POST", `/runs/${runId}/${what}`, {}, sandbox), "JR2_ERR_AUTH_INVALID");
    }
  });

  it("refuse a running run with a code naming why, and an unknown run with 404", async () => {
    const { runId } = await startFlow(app);
    const resumed = await call(app, "POST", `/runs/${runId}/resume`, { acceptDrift: true });
    expectCoded(resumed, "JR2_ERR_RUN_NOT_DRIFTED");
    expect(resumed.body.error).toContain("is running, not drifted");
    const retried = await call(app, "POST", `/runs/${runId}/retry`, {});
    expectCoded(retried, "JR2_ERR_RUN_NOT_RETRYABLE");
    expect(retried.body.error).toContain("it is running");
    expectCoded(await call(app, "POST", "/runs/run-nope/resume", {}), "JR2_ERR_RUN_NOT_FOUND");
    expectCoded(await call(app, "POST", "/runs/run-nope/retry"), "JR2_ERR_RUN_NOT_FOUND");
  });

  it("refuse an unknown body key (a typo of acceptDrift must not run a dry run silently)", async () => {
    const { runId } = await startFlow(app);
    expectCoded(
      await call(app, "POST", `/runs/${runId}/resume`, { acceptdrift: true }),
      "JR2_ERR_REQUEST_INVALID",
    );
  });

  it("refuse a cancelled run's retry: it has no fault", async () => {
    const { runId } = await startFlow(app);
    await call(app, "POST", `/runs/${runId}/cancel`);
    const retried = await call(app, "POST", `/runs/${runId}/retry`, {});
    expectCoded(retried, "JR2_ERR_RUN_NOT_RETRYABLE");
    expect(retried.body.error).toContain("cancelled");
  });
});
