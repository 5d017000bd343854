import { resolve } from "node:path";
import { extractTraceparent } from "@jr2/telemetry";
import {
  AbortAnswer,
  Admission,
  ClientSubmissionId,
  ErrorBody,
  History,
  Jr2Error,
  StreamPage,
  StreamQuery,
  SUBMISSION_ARRIVAL_PATH,
  SubmissionArrival,
  SubmissionRequest,
} from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Conversations } from "../../conversations/conversations.js";
import { type ModelTable, modelEntry } from "../../provider/models.js";
import { cwdProblem } from "../../tools/working-directory.js";
import { createArrivals } from "./arrivals.js";
import { bearerCheck } from "./auth.js";
import { refuseUnknownDefinitionKeys, skipUnknownNotices } from "./notices.js";

const Params = z.object({ iid: z.string().min(1) });

/** Options of the conversations route group. */
export interface ConversationRoutesOptions {
  conversations: Conversations;
  models: ModelTable;
  token: string;
  /** This Harness's version, named when it refuses a definition key it does not know. */
  version: string;
  /** The Harness's data dir (ADR-0175): refused as, inside or around a working directory. */
  dataDir?: string;
  /** This process's bootId, named in an arrival answer (ADR-0288). */
  bootId: string;
}

/**
 * The wire (§7.1): admit, stream (long-poll), abort, history — all behind the bearer.
 * @see SPEC §7.1, §4.4
 */
export const conversationRoutes: FastifyPluginAsyncZod<ConversationRoutesOptions> = async (app, opts) => {
  const { conversations, models } = opts;
  app.addHook("onRequest", bearerCheck(opts.token));
  app.addHook("preValidation", skipUnknownNotices);
  app.addHook("preValidation", refuseUnknownDefinitionKeys(opts.version));
  const known = () => Object.keys(models);
  const arrivals = createArrivals();

  app.post(
    "/conversations/:iid/submissions",
    {
      schema: {
        params: Params,
        body: SubmissionRequest,
        response: { 200: Admission, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => {
      const { iid } = request.params;
      const body = request.body;
      // The same Submission sent again after a reset (ADR-0288): its first admission, once.
      const first = body.clientSubmissionId ? arrivals.get(iid, body.clientSubmissionId) : undefined;
      if (first) return first;
      for (const [field, model] of [
        ["definition.model", body.definition.model],
        ["model", body.model],
      ] as const) {
        if (model !== undefined && !modelEntry(models, model))
          throw new Jr2Error("JR2_ERR_MODEL_UNKNOWN", { model, known: known(), field });
      }
      const reason =
        body.cwd === undefined ? undefined : (cwdProblem(body.cwd) ?? dataDirProblem(body.cwd, opts.dataDir));
      if (reason) throw new Jr2Error("JR2_ERR_CWD_INVALID", { cwd: body.cwd, reason, field: "cwd" });
      // The Turn's trace continues here: the admission's `traceparent` parents the Submission span.
      const admitted = conversations.admit(iid, body, { trace: extractTraceparent(request.headers) });
      if ("lost" in admitted)
        throw new Jr2Error("JR2_ERR_CONVERSATION_NOT_REBUILT", { iid, why: admitted.lost });
      const admission = {
        submissionId: admitted.submissionId,
        offset: admitted.offset,
        streamUrl: `/conversations/${encodeURIComponent(iid)}/stream?offset=${admitted.offset}`,
      };
      if (body.clientSubmissionId) arrivals.put(iid, body.clientSubmissionId, admission);
      return admission;
    },
  );

  // Whether a Submission reset in transit arrived (ADR-0288); answered by this process only.
  app.get(
    SUBMISSION_ARRIVAL_PATH,
    {
      schema: {
        params: Params.extend({ clientSubmissionId: ClientSubmissionId }),
        response: { 200: SubmissionArrival, 400: ErrorBody, 401: ErrorBody },
      },
    },
    async (request) => {
      const { iid, clientSubmissionId } = request.params;
      const admission = arrivals.get(iid, clientSubmissionId);
      return admission
        ? { arrived: true, admission, bootId: opts.bootId }
        : { arrived: false, bootId: opts.bootId };
    },
  );

  app.get(
    "/conversations/:iid/stream",
    {
      schema: {
        params: Params,
        querystring: StreamQuery,
        response: { 200: StreamPage, 204: z.null(), 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const conv = conversations.get(request.params.iid);
      if (!conv) throw new Jr2Error("JR2_ERR_CONVERSATION_NOT_FOUND", { iid: request.params.iid });
      const page = await conversations.read(conv, request.query.offset, request.query.wait * 1000);
      if (!page)
        throw new Jr2Error("JR2_ERR_REQUEST_INVALID", {
          detail: `offset \`${request.query.offset}\` is not one this conversation issued`,
          field: "offset",
        });
      if (page.events.length === 0) return reply.code(204).send(null);
      return page;
    },
  );

  app.post(
    "/conversations/:iid/abort",
    { schema: { params: Params, response: { 200: AbortAnswer, 401: ErrorBody } } },
    async (request) => ({ aborted: conversations.abort(request.params.iid) }),
  );

  app.get(
    "/conversations/:iid/history",
    { schema: { params: Params, response: { 200: History, 401: ErrorBody, 404: ErrorBody } } },
    async (request) => {
      const conv = conversations.get(request.params.iid);
      if (!conv) throw new Jr2Error("JR2_ERR_CONVERSATION_NOT_FOUND", { iid: request.params.iid });
      return { messages: conversations.history(conv), settlements: conv.settlements };
    },
  );
};

/**
 * Why `cwd` may not be a working directory because of the Harness's own data dir: a sandbox
 * binds its run's directory, so that directory must neither be, contain nor lie inside the
 * store (ADR-0175). `undefined` when fine or no data dir.
 */
export function dataDirProblem(cwd: string, dataDir: string | undefined): string | undefined {
  if (dataDir === undefined) return undefined;
  const dir = resolve(dataDir);
  const at = resolve(cwd);
  const within = (a: string, b: string) => a === b || a.startsWith(b.endsWith("/") ? b : `${b}/`);
  if (within(dir, at) || within(at, dir))
    return `it holds or lies inside the Harness's data dir ${dir} (JR2_HARNESS_DATA_DIR), which no run may see`;
  return undefined;
}
