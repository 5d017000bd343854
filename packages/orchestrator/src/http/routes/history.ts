/**
 * A run's saved history and forks (instance token only; ADR-0270): `GET /runs/:runId/history`
 * (its kept versions), `GET /runs/:runId/history/:version` (one whole) and
 * `POST /runs/:runId/fork` (a new run from a version; its Repo Slots at the version's commits).
 * @see SPEC §4.1, §8; issue 13 items 1, 2, 5
 */
import { ForkAnswer, ForkRequest, RunHistory, RunVersion } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RunHost } from "../../runs/run-host.js";
import { errorResponses } from "./error-responses.js";

const RunParams = z.object({ runId: z.string().min(1).max(200) });
const VersionParams = RunParams.extend({ version: z.coerce.number().int().positive() });

/** Registers the history and fork routes over `host`. */
export const historyRoutes: FastifyPluginAsyncZod<{ host: RunHost }> = async (app, { host }) => {
  app.get(
    "/runs/:runId/history",
    {
      schema: {
        summary: "The run's saved versions, oldest first: number, time, state value, status, cause",
        description:
          "Every save of a run is kept as a numbered version: all of a live run's, the last `JR2_VERSIONS_KEPT` " +
          "(default 20) of a settled one, deleted with its event log by `JR2_EVENT_RETENTION_DAYS`.",
        params: RunParams,
        response: { 200: RunHistory, ...errorResponses(401, 404) },
      },
      config: { auth: "instance" },
    },
    async (request) => host.history(request.params.runId),
  );

  app.get(
    "/runs/:runId/history/:version",
    {
      schema: {
        summary:
          "One saved version whole: its snapshot as stored, context, state value, timers, ledger summary",
        params: VersionParams,
        response: { 200: RunVersion, ...errorResponses(400, 401, 404) },
      },
      config: { auth: "instance" },
    },
    async (request) => host.historyVersion(request.params.runId, request.params.version),
  );

  app.post(
    "/runs/:runId/fork",
    {
      schema: {
        summary: "Fork the run from a saved version: a new run starts at that version's state",
        description:
          "The fork gets a new runId and identities of its own (new iids and turnIds, an empty ledger); every Turn " +
          "live at the version is admitted afresh on a new conversation with its task. `context` is a JSON merge " +
          "patch applied to the version's context first (only its keys, each keeping its JSON kind). Timers keep " +
          "their remaining delay. Each Repo Slot gets a repository and Worktree of its own at the version's commit " +
          "(`repos` in the answer); a plain workspace (no Repo Slot), when the workflow has one, starts with an empty " +
          "directory under the fork's runId (`plainWorkspaces` names them; `[]` when every workspace has Repo Slots). The source's log records `forked-to`, the fork's `forked-from` (with `x-jr2-client`).",
        params: RunParams,
        body: ForkRequest,
        response: { 201: ForkAnswer, ...errorResponses(400, 401, 404, 409, 413, 415, 503) },
      },
      config: { auth: "instance" },
    },
    async (request, reply) => {
      const { at, context } = request.body;
      const answer = await host.forkRun(request.params.runId, {
        at,
        ...(context === undefined ? {} : { context }),
        by: clientOf(request.headers),
      });
      return reply.code(201).send(answer);
    },
  );
};

/** Who asked (the feed's `by`): `x-jr2-client: cli | console`, else `http`. */
function clientOf(headers: Record<string, string | string[] | undefined>): "cli" | "http" | "console" {
  const said = headers["x-jr2-client"];
  return said === "cli" || said === "console" ? said : "http";
}
