import { StartRunAnswer, StartRunRequest, WorkflowMenu, WorkflowSummary } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RunHost } from "../../runs/run-host.js";
import { errorResponses } from "./error-responses.js";

const NameParams = z.object({ name: z.string().min(1).max(200) });

/**
 * `GET /workflows`, `GET /workflows/:name/menu` (open) and `POST /workflows/:name/runs`
 * (instance token; the input is validated against the workflow's input schema, 400 naming the
 * fields).
 * @see SPEC §3.1, §3.3, §4.1
 */
/** The start's optional header (ADR-0282). */
const StartRunHeaders = z.object({ "idempotency-key": z.string().optional() }).passthrough();

export const workflowRoutes: FastifyPluginAsyncZod<{ host: RunHost }> = async (app, { host }) => {
  app.get(
    "/workflows",
    {
      schema: {
        summary: "The served workflows and their input schemas",
        response: { 200: z.array(WorkflowSummary) },
      },
      config: { auth: "open" },
    },
    async () => host.listWorkflows(),
  );

  app.get(
    "/workflows/:name/menu",
    {
      schema: {
        summary: "Each Machine's Menus and derived sets (a Menu is per Agent per Machine)",
        params: NameParams,
        response: { 200: WorkflowMenu, ...errorResponses(404) },
      },
      config: { auth: "open" },
    },
    async (request) => host.workflowMenu(request.params.name),
  );

  app.post(
    "/workflows/:name/runs",
    {
      schema: {
        summary: "Start a run",
        description:
          "An optional `Idempotency-Key` header (1–255 visible ASCII characters) makes the start safe to retry: the same key within 24 h answers the same run, 200 instead of 201 (ADR-0282).",
        params: NameParams,
        headers: StartRunHeaders,
        body: StartRunRequest.optional(),
        response: {
          200: StartRunAnswer,
          201: StartRunAnswer,
          ...errorResponses(400, 401, 404, 409, 413, 415, 503),
        },
      },
      config: { auth: "instance" },
    },
    async (request, reply) => {
      const key = request.headers["idempotency-key"];
      if (key === undefined)
        return reply.code(201).send(await host.startRun(request.params.name, request.body?.input));
      const { runId, replayed } = await host.startRunOnce(request.params.name, request.body?.input, key);
      return reply.code(replayed ? 200 : 201).send({ runId });
    },
  );
};
