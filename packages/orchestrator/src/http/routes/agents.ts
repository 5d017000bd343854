import { extractTraceparent } from "@jr2/telemetry";
import { Jr2Error, PickAnswer, PickRequest, Surface } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RunHost } from "../../runs/run-host.js";
import { errorResponses } from "./error-responses.js";

/** An iid is one percent-encoded path segment (it contains `/`), decoded by the router. */
const IidParams = z.object({ iid: z.string().min(1).max(1024) });

/**
 * The agent routes (instance or sandbox token): `GET /agents/:iid/surface` (the Menu and the
 * Allowed picks now) and `POST /agents/:iid/picks` (delivery, §4.3). A Turn outside the
 * token's scope answers 404, exactly as a Turn that does not exist.
 * @see SPEC §4.2, §4.3, §4.4
 */
export const agentRoutes: FastifyPluginAsyncZod<{ host: RunHost }> = async (app, { host }) => {
  app.get(
    "/agents/:iid/surface",
    {
      schema: {
        summary: "The live Turn's Menu and Allowed picks",
        params: IidParams,
        response: { 200: Surface, ...errorResponses(401, 404, 503) },
      },
      config: { auth: "agent" },
    },
    async (request) => host.readSurface(request.params.iid, callerOf(request.caller)),
  );

  app.post(
    "/agents/:iid/picks",
    {
      schema: {
        summary: "Deliver a pick; at most once per toolCallId",
        params: IidParams,
        body: PickRequest,
        response: { 200: PickAnswer, ...errorResponses(400, 401, 404, 413, 415, 503) },
      },
      config: { auth: "agent" },
    },
    async (request) =>
      host.deliverPick(
        request.params.iid,
        callerOf(request.caller),
        request.body,
        extractTraceparent(request.headers),
      ),
  );
};

function callerOf<T>(caller: T | null): T {
  // The auth hook sets it on every `agent` route; a missing caller is a wiring bug, answered 401.
  if (caller === null) throw new Jr2Error("JR2_ERR_AUTH_MISSING");
  return caller;
}
