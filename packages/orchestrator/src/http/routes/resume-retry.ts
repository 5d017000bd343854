import { ResumeAnswer, ResumeRequest, RetryAnswer, RetryRequest } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RunHost } from "../../runs/run-host.js";
import { errorResponses } from "./error-responses.js";

const params = z.object({ runId: z.string().min(1).max(200) });

/**
 * The operator's resume and retry controls (issue 13, ADR-0271), instance token only:
 * - `POST /runs/:runId/resume` `{ acceptDrift? }`: without `acceptDrift: true` a dry run (what
 *   would change, nothing written); with it the drifted run is restored against the served
 *   Machine. 409 `JR2_ERR_RUN_NOT_DRIFTED`, `JR2_ERR_RUN_RESUME_STATES_MISSING` (naming each state).
 * - `POST /runs/:runId/retry` `{ confirm?, force? }`: the faulted Turn retried in place; a run faulted
 *   by its Machine only with `confirm` (else 409 `JR2_ERR_RUN_RETRY_UNCONFIRMED`: the plan), once
 *   its source changed or with `force` (ADR-0272). 409 `JR2_ERR_RUN_NOT_RETRYABLE`.
 * Both go on the run's event log with who asked (`x-jr2-client: cli | console`, else `http`).
 * @see docs/adr/0271-resume-and-retry.md
 */
export const resumeRetryRoutes: FastifyPluginAsyncZod<{ host: RunHost }> = async (app, { host }) => {
  app.post(
    "/runs/:runId/resume",
    {
      schema: {
        summary: "Resume a drifted run against the served Machine (a dry run without acceptDrift)",
        params,
        body: ResumeRequest.nullish(),
        response: { 200: ResumeAnswer, ...errorResponses(400, 401, 404, 409, 413, 415, 503) },
      },
      config: { auth: "instance" },
    },
    async (request) => host.resumeRun(request.params.runId, request.body ?? {}, clientOf(request.headers)),
  );
  app.post(
    "/runs/:runId/retry",
    {
      schema: {
        summary: "Retry a run's faulted Turn in place, from its last saved version before the fault",
        params,
        body: RetryRequest.nullish(),
        response: { 200: RetryAnswer, ...errorResponses(400, 401, 404, 409, 413, 415, 503) },
      },
      config: { auth: "instance" },
    },
    async (request) => host.retryRun(request.params.runId, clientOf(request.headers), request.body ?? {}),
  );
};

/** Who asked (the feed's `by`): `x-jr2-client: cli | console`, else `http`. */
export function clientOf(headers: Record<string, string | string[] | undefined>): "cli" | "http" | "console" {
  const said = headers["x-jr2-client"];
  return said === "cli" || said === "console" ? said : "http";
}
