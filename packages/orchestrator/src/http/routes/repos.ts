/**
 * `GET /runs/:runId/repos` (instance token, like `GET /runs/:runId`): the run's Repo Slots —
 * branch, base, head, what was pushed, commits and a diffstat read from its Harness (issue 28).
 */
import { RunRepos, RunSettledAnswer } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RunHost } from "../../runs/run-host.js";
import { errorResponses } from "./error-responses.js";

const RunParams = z.object({ runId: z.string().min(1).max(200) });

/** Registers the route over `host`. */
export const repoRoutes: FastifyPluginAsyncZod<{ host: RunHost }> = async (app, { host }) => {
  app.get(
    "/runs/:runId/repos",
    {
      schema: {
        summary:
          "The run's Repo Slots: branch, base, head commit, what was pushed, its commits and a diffstat",
        params: RunParams,
        response: { 200: RunRepos, ...errorResponses(401, 404) },
      },
      config: { auth: "instance" },
    },
    async (request) => host.runRepos(request.params.runId),
  );
  app.get(
    "/runs/:runId/settled",
    {
      schema: {
        summary: "Whether the store knows the run settled (running, settled with its time, or deleted)",
        description:
          "For the Harness's Worktree clean-up (issue 28): it removes a run's Worktrees only on `settled` past " +
          "JR2_WORKTREE_KEEP or `deleted`. The instance token or a sandbox token.",
        params: RunParams,
        response: { 200: RunSettledAnswer, ...errorResponses(401) },
      },
      config: { auth: "agent" },
    },
    async (request) => host.runSettled(request.params.runId),
  );
};
