import { GateEventAnswer, GateEventRequest } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RunHost } from "../../runs/run-host.js";
import { errorResponses } from "./error-responses.js";

/**
 * `POST /runs/:runId/gates/:gateId/events` (instance token) with `{ type, ...payload }`:
 * 200 `{ moved: true }`; 400 not accepted or bad payload; 409 with `acceptsNow` when the run
 * would not take it now (nothing delivered); 404 no open Gate with that id.
 * @see SPEC §6
 */
export const gateRoutes: FastifyPluginAsyncZod<{ host: RunHost }> = async (app, { host }) => {
  app.post(
    "/runs/:runId/gates/:gateId/events",
    {
      schema: {
        summary: "Send an event to an open Gate",
        params: z.object({ runId: z.string().min(1).max(200), gateId: z.string().min(1).max(500) }),
        body: GateEventRequest,
        response: { 200: GateEventAnswer, ...errorResponses(400, 401, 404, 409, 413, 415, 503) },
      },
      config: { auth: "instance" },
    },
    async (request) =>
      host.sendGateEvent(
        request.params.runId,
        request.params.gateId,
        request.body,
        clientOf(request.headers),
      ),
  );
};

/** Who sends a Gate event (the feed's `gate-answered.by`): `x-jr2-client: cli | console`, else `http`. */
function clientOf(headers: Record<string, string | string[] | undefined>): "cli" | "http" | "console" {
  const said = headers["x-jr2-client"];
  return said === "cli" || said === "console" ? said : "http";
}
