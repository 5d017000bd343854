/**
 * @jr2/http-edge — the HTTP edge below the routes that both services share (issue 16 §6, §7):
 * how long a client may take to send a request, how many connections a service holds, and the
 * coded answers Node's parser gives before Fastify sees a request (a garbage request line,
 * headers over the size limit, a timeout). Each service names its own env variables
 * ({@link ORCHESTRATOR_HTTP_EDGE_ENV}, {@link HARNESS_HTTP_EDGE_ENV}).
 *
 * Only the *arrival* of a request is timed: once a request is fully received, Node stops timing
 * it, so the SSE run feed, a pick waiting on its save and a Harness long-poll run as long as
 * they need. No idle-socket timeout is set for the same reason.
 * @see ADR-0060, ADR-0156
 */
import { maxHeaderSize, type Server, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { type ErrorBody, type ErrorCode, errorCodes, Jr2Error, jr2Error } from "@jr2/wire";
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import { guardConnections } from "./connection-guard.js";

export {
  type ConnectionGuardStats,
  guardConnections,
  proveConnection,
  SILENT_MS,
  UNPROVEN_REQUEST_MS,
} from "./connection-guard.js";
export { isResetBeforeAnswer, RESET_CODES, type ResetRetryOptions, retryOnReset } from "./reset-retry.js";

/** How the edge bounds slow and numerous clients. Every value is in ms except `maxConnections`. */
export interface HttpEdgeLimits {
  /** The request line and headers must arrive within this (Node's `headersTimeout`). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (Node's `requestTimeout`). */
  requestTimeoutMs: number;
  /**
   * An idle keep-alive connection is closed after this — long after the clients let go of it:
   * every answer tells them `Keep-Alive: timeout=5` ({@link CLIENT_KEEP_ALIVE_S}; ADR-0285).
   */
  keepAliveTimeoutMs: number;
  /** Open connections, all clients together (host networking: every client is 127.0.0.1). */
  maxConnections: number;
}

/** The defaults: 10 s for headers, 30 s for a request, 65 s keep-alive, 1024 connections. */
export const DEFAULT_HTTP_EDGE_LIMITS: Readonly<HttpEdgeLimits> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 1024,
});

/**
 * The idle time, s, every answer advertises to its client (`Keep-Alive: timeout=5`): undici (the
 * services' and the CLI's `fetch`) keeps a pooled socket a second less than that, so the server
 * (65 s) never closes a socket a client may still reuse — server longer than client, as load
 * balancers are configured. At 5 s each side, a client under event-loop lag met the close
 * (`ECONNRESET`/`UND_ERR_SOCKET`): an admission lost in transit (issue 24 item 5, ADR-0285).
 */
export const CLIENT_KEEP_ALIVE_S = 5;

/** The env variable of each limit, per service. */
export type HttpEdgeEnv = Readonly<Record<keyof HttpEdgeLimits, string>>;

/** The Orchestrator's (`jr2 serve`) env variables. */
export const ORCHESTRATOR_HTTP_EDGE_ENV: HttpEdgeEnv = Object.freeze({
  headersTimeoutMs: "JR2_HEADERS_TIMEOUT_MS",
  requestTimeoutMs: "JR2_REQUEST_TIMEOUT_MS",
  keepAliveTimeoutMs: "JR2_KEEP_ALIVE_TIMEOUT_MS",
  maxConnections: "JR2_MAX_CONNECTIONS",
});

/** The Harness's (`jr2-harness`) env variables. */
export const HARNESS_HTTP_EDGE_ENV: HttpEdgeEnv = Object.freeze({
  headersTimeoutMs: "JR2_HARNESS_HEADERS_TIMEOUT_MS",
  requestTimeoutMs: "JR2_HARNESS_REQUEST_TIMEOUT_MS",
  keepAliveTimeoutMs: "JR2_HARNESS_KEEP_ALIVE_TIMEOUT_MS",
  maxConnections: "JR2_HARNESS_MAX_CONNECTIONS",
});

/**
 * Reads the limits from env (unset → the default), under the service's variable names.
 * @throws Jr2Error `JR2_ERR_CONFIG_INVALID` naming the variable: not a whole number ≥ 1, or a
 *   headers timeout longer than the request timeout (Node would refuse it)
 */
export function readHttpEdgeLimits(env: NodeJS.ProcessEnv, names: HttpEdgeEnv): HttpEdgeLimits {
  const limits = { ...DEFAULT_HTTP_EDGE_LIMITS };
  for (const key of Object.keys(names) as Array<keyof HttpEdgeLimits>) {
    const name = names[key];
    const text = env[name];
    if (text === undefined || text.trim() === "") continue;
    if (!/^\d+$/.test(text.trim()) || Number(text) < 1)
      throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
        detail: `${name} \`${text}\` is not a whole number ≥ 1`,
      });
    limits[key] = Number(text);
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs)
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail: `${names.headersTimeoutMs} (${limits.headersTimeoutMs}) is longer than ${names.requestTimeoutMs} (${limits.requestTimeoutMs}); the headers are part of the request`,
    });
  return limits;
}

/**
 * The Fastify constructor options that apply `limits`. Node checks the timeouts on an interval
 * (30 s by default): it is set to a quarter of the headers timeout (at most 1 s), so a slow
 * client is cut close to its deadline.
 */
export function httpEdgeServerOptions(limits: HttpEdgeLimits) {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // An idle-socket timeout would cut the SSE feed and long waits: none.
    connectionTimeout: 0,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    clientErrorHandler: answerClientError(limits),
  };
}

/**
 * Bounds the server's open connections without a lock-out by idle sockets
 * ({@link guardConnections}: oldest connection that sent no request closed first, silent ones
 * after 2 s, a reserve for connections that carry requests), and tells every client the
 * keep-alive idle time it may keep a pooled socket ({@link CLIENT_KEEP_ALIVE_S}). Logs one
 * `warn` a minute while it closes or refuses connections, naming `names.maxConnections`.
 */
export function boundConnections(
  server: Server,
  limits: HttpEdgeLimits,
  log: FastifyBaseLogger,
  names: HttpEdgeEnv,
): void {
  guardConnections(server, limits.maxConnections, log, names.maxConnections);
  const hint = `timeout=${Math.min(CLIENT_KEEP_ALIVE_S, Math.max(1, Math.floor(limits.keepAliveTimeoutMs / 1000) - 1))}`;
  // Set before any route writes: Node then sends this hint instead of its own (the server's).
  server.prependListener("request", (_request, response) => response.setHeader("keep-alive", hint));
}

/** Marks a socket whose request was already answered while its body is still being read. */
const ANSWERED = Symbol("jr2.answeredWhileDraining");

/** How much of a refused body is read (and thrown away) so the client can read the answer. */
export const REFUSED_BODY_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * For a request refused before its body was read (413): answer on a connection that stays
 * open and read the rest of the body, up to {@link REFUSED_BODY_DRAIN_BYTES} and the request
 * timeout, instead of closing it under the client. Closing a socket with unread data sends a
 * TCP reset, and a client still sending (a chunked upload) loses the 413 it was sent.
 * Call it from the error handler before sending the answer.
 */
export function drainRefusedBody(request: FastifyRequest, reply: FastifyReply): void {
  reply.removeHeader("connection");
  const req = request.raw;
  reply.raw.once("finish", () => {
    if (req.complete) return;
    const socket = req.socket as Socket & { [ANSWERED]?: true };
    socket[ANSWERED] = true;
    let read = 0;
    req.on("data", (chunk: Buffer) => {
      read += chunk.length;
      if (read > REFUSED_BODY_DRAIN_BYTES) socket.destroy();
    });
    req.once("end", () => delete socket[ANSWERED]);
  });
}

/**
 * The status and coded body of an error Node's HTTP parser or its timers raised on a
 * connection (Fastify's `clientErrorHandler`): a request that timed out answers 408, headers
 * over Node's size limit 431, anything that does not parse as HTTP/1.1 400.
 */
export function clientErrorAnswer(
  error: Error & { code?: string },
  limits: HttpEdgeLimits,
): { status: number; body: ErrorBody } {
  const coded = (code: ErrorCode, fields: Record<string, unknown>) => ({
    status: errorCodes[code].status,
    body: jr2Error(code, fields),
  });
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT")
    return coded("JR2_ERR_REQUEST_TIMEOUT", {
      headersTimeoutMs: limits.headersTimeoutMs,
      requestTimeoutMs: limits.requestTimeoutMs,
    });
  if (error.code === "HPE_HEADER_OVERFLOW")
    return coded("JR2_ERR_REQUEST_HEADERS_TOO_LARGE", { limit: maxHeaderSize });
  return coded("JR2_ERR_REQUEST_MALFORMED_HTTP", { detail: error.code ?? "unparseable" });
}

/** Fastify's `clientErrorHandler`: writes the coded answer (when no answer began), then closes. */
function answerClientError(limits: HttpEdgeLimits) {
  return function (this: { log: FastifyBaseLogger }, error: Error & { code?: string }, socket: Socket): void {
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const { status, body } = clientErrorAnswer(error, limits);
    this.log.info({ code: body.code, cause: error.code }, body.error);
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    const answered = (socket as { [ANSWERED]?: true })[ANSWERED] === true || inFlight?.headersSent === true;
    if (socket.writable && !answered) {
      const text = JSON.stringify(body);
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
      );
      // The answer is flushed first; a client that never closes its side is cut shortly after.
      setTimeout(() => socket.destroy(), 1_000).unref();
      return;
    }
    socket.destroy();
  };
}
