import { createHash, timingSafeEqual } from "node:crypto";
import { type ErrorCode, errorCodes, jr2Error } from "@jr2/wire";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, FastifySchema } from "fastify";
import type { Jr2Metrics } from "./metrics.js";

/**
 * `GET /metrics`: the registry as Prometheus text (issue 11 item 5, ADR-0420). Open like
 * `/healthz` when no token is given; with `token` (`JR2_METRICS_TOKEN`) it requires
 * `Authorization: Bearer <token>` and compares nothing else — the service's own bearer opens
 * it only if the operator chose the same value for both.
 */

/** Options of {@link metricsRoute}. */
export interface MetricsRouteOptions {
  metrics: Pick<Jr2Metrics, "text">;
  /** `JR2_METRICS_TOKEN` (see `readMetricsToken`); `undefined` or `""`: open. */
  token: string | undefined;
  /**
   * Route config merged into the route (e.g. the Orchestrator's `{ auth: "open" }`, so its own
   * bearer check lets the request through to this one).
   */
  routeConfig?: Record<string, unknown>;
}

/** `hide` is @fastify/swagger's: the route stays out of a service's OpenAPI document. */
const HIDDEN = { hide: true } as FastifySchema;

/** The content type of Prometheus text exposition 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * Registers `GET /metrics`. Answers 200 with Prometheus text; with a token, 401
 * `JR2_ERR_AUTH_MISSING` / `JR2_ERR_AUTH_INVALID` (the wire's coded body) before reading any
 * metric. The route is hidden from OpenAPI (it is not JSON).
 * @example app.register(metricsRoute, { metrics, token: readMetricsToken(process.env) });
 */
export const metricsRoute: FastifyPluginAsync<MetricsRouteOptions> = async (app, opts) => {
  const check = opts.token ? metricsBearerCheck(opts.token) : undefined;
  app.get(
    "/metrics",
    { schema: HIDDEN, config: { ...(opts.routeConfig ?? {}) } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const refused = check?.(request.headers.authorization);
      if (refused) return reply.code(errorCodes[refused].status).send(jr2Error(refused));
      const text = await opts.metrics.text();
      return reply.type(PROMETHEUS_CONTENT_TYPE).send(text);
    },
  );
};

/**
 * A bearer check against `token` alone: the SHA-256 digests compared in constant time (neither
 * the time nor a length check tells the caller the token's length). Returns the refusal's code,
 * or `undefined` when the header carries the token. Never logs.
 */
export function metricsBearerCheck(
  token: string,
): (authorization: string | undefined) => ErrorCode | undefined {
  const expected = digest(token);
  return (authorization) => {
    const rest = /^Bearer(?:\s+(.*))?$/is.exec(authorization?.trim() ?? "")?.[1]?.trim();
    if (!rest) return "JR2_ERR_AUTH_MISSING";
    if (/\s/.test(rest) || !timingSafeEqual(digest(rest), expected)) return "JR2_ERR_AUTH_INVALID";
    return undefined;
  };
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
