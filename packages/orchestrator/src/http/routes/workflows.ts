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
        params: NameParams,
        body: StartRunRequest.optional(),
        response: { 201: StartRunAnswer, ...errorResponses(400, 401, 404, 413, 415, 503) },
      },
      config: { auth: "instance" },
    },
    async (request, reply) => {
      const started = await host.startRun(request.params.name, request.body?.input);
      return reply.code(201).send(started);
    },
  );
};
