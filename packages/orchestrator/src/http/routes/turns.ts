/**
 * The Turn routes (instance token, like `GET /runs/:runId`): `GET /runs/:runId/turns` (the
 * run's Turns in start order) and `GET /runs/:runId/turns/:turnId` (one Turn's transcript,
 * readable while it runs), served from the store (ADR-0257).
 * @see SPEC §4.1; issue 11 item 3
 */
import { TurnList, TurnTranscript } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RunHost } from "../../runs/run-host.js";
import { errorResponses } from "./error-responses.js";

const RunParams = z.object({ runId: z.string().min(1).max(200) });
const TurnParams = RunParams.extend({ turnId: z.string().min(1).max(512) });

/** Registers the Turn routes over `host`. */
export const turnRoutes: FastifyPluginAsyncZod<{ host: RunHost }> = async (app, { host }) => {
  app.get(
    "/runs/:runId/turns",
    {
      schema: {
        summary: "The run's Turns in the order they started: agent, state, times, outcome, pick, usage",
        params: RunParams,
        response: { 200: TurnList, ...errorResponses(401, 404) },
      },
      config: { auth: "instance" },
    },
    async (request) => host.turns(request.params.runId),
  );

  app.get(
    "/runs/:runId/turns/:turnId",
    {
      schema: {
        summary:
          "One Turn's transcript: the Turn, its conversation's system prompt and tools (prefix), its entries in order",
        description:
          "Every message the Turn's requests added, each model answer (text, reasoning, tool calls with their raw " +
          "arguments, usage, finish reason) and each tool result and receipt, as recorded from the Harness's stream. " +
          "A text field over 64 KiB is cut there; `capped` keeps its full byte count.",
        params: TurnParams,
        response: { 200: TurnTranscript, ...errorResponses(401, 404) },
      },
      config: { auth: "instance" },
    },
    async (request) => host.turnTranscript(request.params.runId, request.params.turnId),
  );
};
