import { drainRefusedBody } from "@jr2/http-edge";
import { type ErrorBody, type ErrorCode, errorCodes, Jr2Error, jr2Error } from "@jr2/wire";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";

/** The router's longest path segment, in characters: iids are long once percent-encoded. */
export const MAX_PARAM_LENGTH = 2048;

/**
 * One error handler for the whole app: every error answer is `{ error, code, ...fields }` with a
 * code of @jr2/wire's table (§4) — Jr2Errors as thrown, Fastify's own errors (malformed JSON,
 * oversized body, validation, unsupported media type, unknown route) mapped to coded 4xx.
 * Only a bug of ours answers 5xx, logged with its stack.
 * @see SPEC §4, STYLE.md "Errors"
 */
export const errorsPlugin = fp(
  async (app: FastifyInstance, options: { bodyLimit: number }) => {
    app.setErrorHandler((error: FastifyError | Jr2Error, request, reply) => {
      const { status, body } = toErrorAnswer(error, {
        bodyLimit: options.bodyLimit,
        contentType: request.headers["content-type"],
      });
      // A body refused mid-upload is read to its end, so the client can read the 413 (ADR-0060).
      if (status === 413) drainRefusedBody(request, reply);
      // A coded 503 (stopping, store failing) is expected and logged where it arose: no stack per retry.
      if (status >= 500 && !(error instanceof Jr2Error && status === 503))
        request.log.error({ err: error }, "request failed");
      else request.log.info({ code: body.code }, body.error);
      // A 503 that says when to come back (JR2_ERR_STORE_FAILING, ADR-0253) says it in the header too.
      if (status === 503 && typeof body.retryAfter === "number")
        reply.header("retry-after", String(body.retryAfter));
      return reply.code(status).type("application/json").send(body);
    });
    app.setNotFoundHandler((request, reply) =>
      reply
        .code(404)
        .send(
          jr2Error("JR2_ERR_ROUTE_NOT_FOUND", { method: request.method, url: request.url.split("?")[0] }),
        ),
    );
  },
  { name: "jr2-errors", fastify: "5.x" },
);

/**
 * Fastify's `frameworkErrors` option: a URL the router cannot read (bad percent-encoding, a
 * segment past `maxParamLength`) is answered before any route or hook, with a coded 400
 * `JR2_ERR_REQUEST_INVALID` instead of Fastify's own `FST_ERR_*` body.
 * @see SPEC §4, ADR-0053
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const { status, body } = toErrorAnswer(error, { bodyLimit: 0 });
  request.log.info({ code: body.code, cause: error.code }, body.error);
  return reply.code(status).type("application/json").send(body);
}

/**
 * Maps any error a route can raise to its status and coded body. Every 409 carries
 * `acceptsNow` (`[]` when the run takes nothing now, e.g. it is no longer live), so a client
 * reads one shape for "not now" (§6, ADR-0053).
 */
export function toErrorAnswer(
  error: unknown,
  request: { bodyLimit: number; contentType?: string | undefined },
): { status: number; body: ErrorBody } {
  if (error instanceof Jr2Error) {
    const body = error.toBody();
    return { status: error.statusCode, body: error.statusCode === 409 ? { acceptsNow: [], ...body } : body };
  }
  const e = error as Partial<FastifyError> & { validation?: unknown };
  if (hasZodFastifySchemaValidationErrors(e)) {
    const issues = e.validation.map((v) => ({ path: v.instancePath, message: v.message ?? "invalid" }));
    const where = e.validationContext ?? "request";
    const detail = issues.map((i) => `${where}${i.path === "/" ? "" : i.path}: ${i.message}`).join("; ");
    return coded("JR2_ERR_REQUEST_INVALID", { detail, issues });
  }
  switch (e.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return coded("JR2_ERR_REQUEST_MALFORMED_JSON", { detail: e.message ?? "unparseable" });
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return coded("JR2_ERR_REQUEST_TOO_LARGE", { limit: request.bodyLimit });
    case "FST_ERR_BAD_URL":
      return coded("JR2_ERR_REQUEST_INVALID", {
        detail: `the path ${quoted(e)} is not valid percent-encoding`,
      });
    case "FST_ERR_MAX_PARAM_LENGTH":
      return coded("JR2_ERR_REQUEST_INVALID", {
        detail: `a path segment of ${quoted(e)} is longer than ${MAX_PARAM_LENGTH} characters`,
      });
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return coded("JR2_ERR_REQUEST_UNSUPPORTED_MEDIA_TYPE", {
        contentType: request.contentType ?? "(none)",
      });
  }
  // JSON.parse errors reach here with statusCode 400 and no code on some paths.
  if (error instanceof SyntaxError) return coded("JR2_ERR_REQUEST_MALFORMED_JSON", { detail: error.message });
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    return {
      status: e.statusCode,
      body: jr2Error("JR2_ERR_REQUEST_INVALID", { detail: e.message ?? "bad request" }),
    };
  }
  return coded("JR2_ERR_SERVER_INTERNAL", {
    detail: e.code ?? (error instanceof Error ? error.name : "unknown"),
  });
}

/** The path a framework error names, cut short: it is echoed, and may be kilobytes long. */
function quoted(error: Partial<FastifyError>): string {
  const path = /^'(.*)' is /s.exec(error.message ?? "")?.[1] ?? "(unreadable)";
  return `\`${path.length > 80 ? `${path.slice(0, 80)}…` : path}\``;
}

function coded(code: ErrorCode, fields: Record<string, unknown>): { status: number; body: ErrorBody } {
  return { status: errorCodes[code].status, body: jr2Error(code, fields) };
}
