import { ErrorBody, ModelList } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { ModelTable } from "../../provider/models.js";
import { bearerCheck } from "./auth.js";

/**
 * `GET /models` (behind the Harness bearer): the logical model names this Harness serves, so
 * the Orchestrator can warn at start-up about an Agent whose `model` is not in the table
 * (issue 10 §5 "Model names"). Names only — never a URL, an upstream id or a key.
 * @see SPEC §7.7, ADR-0157
 */
export const modelRoutes: FastifyPluginAsyncZod<{ models: ModelTable; token: string }> = async (
  app,
  opts,
) => {
  app.addHook("onRequest", bearerCheck(opts.token));
  const answer: ModelList = { models: Object.keys(opts.models).map((name) => ({ name })) };
  app.get("/models", { schema: { response: { 200: ModelList, 401: ErrorBody } } }, async () => answer);
};
