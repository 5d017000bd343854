import { drainRefusedBody } from "@jr2/http-edge";
import { Jr2Error } from "@jr2/wire";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";

/**
 * Every error answers `{ error, code, ...fields }` (§4): a body that fails its schema is a 400
 * naming the field (`field`, and in the message); Fastify's own errors (unparseable JSON, an
 * oversized body, an unsupported content type) map to their coded 4xx; only a bug of ours
 * answers 500.
 * @param bodyLimit the app's body limit in bytes, named in the 413 answer.
 * @see SPEC §4, §7.1
 */
export function registerErrorHandler(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((err: Error, request, reply) => {
    const e = toJr2Error(err, request, bodyLimit);
    // A body refused mid-upload is read to its end, so the client can read the 413 (ADR-0156).
    if (e.statusCode === 413) drainRefusedBody(request, reply);
    if (e.statusCode >= 500 && e.statusCode !== 503) request.log.error({ err }, "unhandled error");
    // A 503 that says when to come back (JR2_ERR_HARNESS_STORE_FAILING) says it in the header too.
    if (e.statusCode === 503 && typeof e.fields.retryAfter === "number")
      reply.header("retry-after", String(e.fields.retryAfter));
    return reply.code(e.statusCode).send(e.toBody());
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(
      new Jr2Error("JR2_ERR_ROUTE_NOT_FOUND", {
        method: request.method,
        url: request.url.split("?")[0],
      }).toBody(),
    ),
  );
}

/** Maps any error a route raises to a coded Jr2Error. */
function toJr2Error(err: Error, request: FastifyRequest, bodyLimit: number): Jr2Error {
  if (err instanceof Jr2Error) return err;
  if (hasZodFastifySchemaValidationErrors(err)) {
    const first = err.validation[0];
    const where = (err as { validationContext?: string }).validationContext ?? "body";
    const field =
      (first?.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".") ||
      String(first?.params?.missingProperty ?? where);
    const detail = `${field}: ${first?.message ?? "invalid"}`;
    // Only a Submission body is a Submission; a bad query or path parameter is a bad request.
    if (where !== "body") return new Jr2Error("JR2_ERR_REQUEST_INVALID", { detail, field });
    if (field === "cwd")
      return new Jr2Error("JR2_ERR_CWD_NOT_ABSOLUTE", { cwd: (request.body as { cwd?: string }).cwd, field });
    return new Jr2Error("JR2_ERR_SUBMISSION_INVALID", { detail, field });
  }
  switch ((err as FastifyError).code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new Jr2Error("JR2_ERR_REQUEST_MALFORMED_JSON", { detail: err.message });
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new Jr2Error("JR2_ERR_REQUEST_TOO_LARGE", { limit: bodyLimit });
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new Jr2Error("JR2_ERR_REQUEST_UNSUPPORTED_MEDIA_TYPE", {
        contentType: request.headers["content-type"] ?? "(none)",
      });
  }
  const status = (err as { statusCode?: number }).statusCode;
  if (err instanceof SyntaxError || status === 400)
    return new Jr2Error("JR2_ERR_REQUEST_MALFORMED_JSON", { detail: err.message });
  if (status === 413) return new Jr2Error("JR2_ERR_REQUEST_TOO_LARGE", { limit: bodyLimit });
  if (status === 415)
    return new Jr2Error("JR2_ERR_REQUEST_UNSUPPORTED_MEDIA_TYPE", {
      contentType: request.headers["content-type"] ?? "(none)",
    });
  return new Jr2Error("JR2_ERR_SERVER_INTERNAL", { detail: (err as FastifyError).code ?? err.name });
}

/**
 * Fastify's `frameworkErrors`: a path that does not decode (`%ff`) or a parameter longer than
 * the router allows answers a coded 400, not Fastify's own body. These come before routing, so
 * before the bearer check; they reveal nothing about conversations.
 * @see SPEC §4
 */
export function frameworkErrors(maxParamLength: number) {
  return (err: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    const detail =
      err.code === "FST_ERR_MAX_PARAM_LENGTH"
        ? `a path parameter is longer than ${maxParamLength} characters`
        : err.code === "FST_ERR_BAD_URL"
          ? "the path is not valid percent-encoding"
          : err.message;
    const e = new Jr2Error("JR2_ERR_REQUEST_INVALID", { detail });
    return reply.code(e.statusCode).send(e.toBody());
  };
}
