import {
  AttachRequest,
  CheckoutAtRequest,
  CommitAnswer,
  CommitRequest,
  DiffAnswer,
  DiffRequest,
  ErrorBody,
  PushAnswer,
  PushRequest,
  RemoveAnswer,
  RemoveRequest,
  SlotHandle,
} from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { Workspaces } from "../../workspace/workspaces.js";
import { bearerCheck } from "./auth.js";

/**
 * The Repo Slot routes (issue 28 §2, behind the Harness bearer): the Orchestrator asks, the
 * Harness runs git. All `POST` with a JSON body (`@jr2/wire` workspace.ts), all idempotent in
 * effect for a repeat of the same body except `commit` (a second commit of an unchanged
 * Worktree makes none) and `checkout-at` (each reset makes one more rescue ref).
 * - `/workspaces/attach` → {@link SlotHandle}
 * - `/workspaces/commit` → {@link CommitAnswer}
 * - `/workspaces/checkout-at` → {@link SlotHandle} (retry, or with `from` a fork)
 * - `/workspaces/diff` → {@link DiffAnswer}
 * - `/workspaces/push` → {@link PushAnswer}
 * - `/workspaces/remove` → {@link RemoveAnswer}
 * Errors: the `JR2_ERR_WORKSPACE_*` codes of @jr2/wire (URL refused 400, slot unknown 404,
 * Worktree lost or commit gone 409, fetch or push failed 502).
 */
export const workspaceRoutes: FastifyPluginAsyncZod<{ workspaces: Workspaces; token: string }> = async (
  app,
  opts,
) => {
  app.addHook("onRequest", bearerCheck(opts.token));
  const { workspaces } = opts;
  const errors = {
    400: ErrorBody,
    401: ErrorBody,
    404: ErrorBody,
    409: ErrorBody,
    500: ErrorBody,
    502: ErrorBody,
  };
  app.post(
    "/workspaces/attach",
    { schema: { body: AttachRequest, response: { 200: SlotHandle, ...errors } } },
    async (req) => workspaces.attach(req.body),
  );
  app.post(
    "/workspaces/commit",
    { schema: { body: CommitRequest, response: { 200: CommitAnswer, ...errors } } },
    async (req) => workspaces.commit(req.body),
  );
  app.post(
    "/workspaces/checkout-at",
    { schema: { body: CheckoutAtRequest, response: { 200: SlotHandle, ...errors } } },
    async (req) => {
      const { from, ...rest } = req.body;
      return from ? workspaces.fork({ ...rest, from }) : workspaces.checkoutAt(rest);
    },
  );
  app.post(
    "/workspaces/diff",
    { schema: { body: DiffRequest, response: { 200: DiffAnswer, ...errors } } },
    async (req) => {
      const { maxBytes, ...ref } = req.body;
      const bound = Math.min(maxBytes ?? workspaces.config.diffMaxBytes, workspaces.config.diffMaxBytes);
      return workspaces.diff({ ...ref, maxBytes: bound });
    },
  );
  app.post(
    "/workspaces/push",
    { schema: { body: PushRequest, response: { 200: PushAnswer, ...errors } } },
    async (req) => workspaces.push(req.body),
  );
  app.post(
    "/workspaces/remove",
    { schema: { body: RemoveRequest, response: { 200: RemoveAnswer, ...errors } } },
    async (req) => workspaces.remove(req.body),
  );
};
