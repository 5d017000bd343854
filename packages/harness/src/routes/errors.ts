import { Jr2Error } from "@jr2/wire";
import type { FastifyInstance } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";

/**
 * Every error answers `{ error, code, ...fields }` (§4): a body that fails its schema is a 400
 * naming the field (`field`, and in the message).
 */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: Error, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(err)) {
      const first = err.validation[0];
      const field =
        (first?.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".") ||
        String(first?.params?.missingProperty ?? "body");
      const code = field === "cwd" ? "JR2_ERR_CWD_NOT_ABSOLUTE" : "JR2_ERR_SUBMISSION_INVALID";
      const e =
        code === "JR2_ERR_CWD_NOT_ABSOLUTE"
          ? new Jr2Error(code, { cwd: (request.body as { cwd?: string } | undefined)?.cwd, field })
          : new Jr2Error(code, { detail: `${field}: ${first?.message ?? "invalid"}`, field });
      return reply.code(e.statusCode).send(e.toBody());
    }
    if (err instanceof Jr2Error) return reply.code(err.statusCode).send(err.toBody());
    const status = (err as { statusCode?: number }).statusCode;
    if (status === 400) {
      const e = new Jr2Error("JR2_ERR_REQUEST_MALFORMED_JSON", { detail: err.message });
      return reply.code(400).send(e.toBody());
    }
    if (status === 413)
      return reply.code(413).send(new Jr2Error("JR2_ERR_REQUEST_TOO_LARGE", { limit: "?" }).toBody());
    request.log.error({ err }, "unhandled error");
    return reply.code(500).send(new Jr2Error("JR2_ERR_SERVER_INTERNAL", { detail: err.message }).toBody());
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(new Jr2Error("JR2_ERR_ROUTE_NOT_FOUND", { method: request.method, url: request.url }).toBody()),
  );
}
