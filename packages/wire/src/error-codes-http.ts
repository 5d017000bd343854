import type { ErrorCodeSpec } from "./error-spec.js";

/**
 * The error codes of requests in general, the HTTP edge, auth and a service's lifecycle: the
 * first rows of {@link errorCodes} (spread there, in this order). `docs/reference/errors.md`
 * lists them; a test keeps both in step.
 * @see SPEC §4 (error bodies), §4.4 (auth)
 */
export const httpErrorCodes = {
  // Requests in general
  JR2_ERR_REQUEST_INVALID: { status: 400, message: "invalid request: {detail}" },
  JR2_ERR_REQUEST_MALFORMED_JSON: { status: 400, message: "the request body is not valid JSON: {detail}" },
  JR2_ERR_REQUEST_TOO_LARGE: { status: 413, message: "the request body exceeds {limit} bytes" },
  JR2_ERR_ROUTE_NOT_FOUND: { status: 404, message: "no route {method} {url}" },
  // The HTTP edge, answered before any route (issue 16 §6, §7)
  JR2_ERR_REQUEST_MALFORMED_HTTP: {
    status: 400,
    message: "the request is not valid HTTP/1.1 ({detail}); send a request line `METHOD /path HTTP/1.1`",
  },
  JR2_ERR_REQUEST_HEADERS_TOO_LARGE: {
    status: 431,
    message: "the request headers exceed {limit} bytes; send shorter headers",
  },
  JR2_ERR_REQUEST_TIMEOUT: {
    status: 408,
    message:
      "the request did not arrive in time: headers within {headersTimeoutMs} ms, the whole request within {requestTimeoutMs} ms",
  },
  JR2_ERR_REQUEST_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: "unsupported content type `{contentType}`; send `application/json`",
  },
  JR2_ERR_SERVER_INTERNAL: { status: 500, message: "internal error ({detail}); see the server log" },
  // Auth (§4.4)
  JR2_ERR_AUTH_MISSING: {
    status: 401,
    message: "missing bearer token; send `Authorization: Bearer <token>`",
  },
  JR2_ERR_AUTH_INVALID: { status: 401, message: "the bearer token is not valid for this service" },
  /**
   * A request forwarded by a peer (`x-jr2-forwarded-by`) without a valid peer credential
   * (ADR-0281): peers authenticate each other by an HMAC of the shared `JR2_PEER_KEY`, never
   * by relaying the caller's bearer token.
   */
  JR2_ERR_PEER_CREDENTIAL: {
    status: 401,
    message:
      "a request forwarded by `{from}` has no valid peer credential: {detail}; give every instance of the cluster the same JR2_PEER_KEY",
  },
  // Lifecycle
  JR2_ERR_SERVICE_STOPPING: {
    status: 503,
    message: "the service is stopping; retry against its replacement",
  },
  /**
   * The Orchestrator's event loop lagged past its bound (`lagMs` in the last second): requests
   * are refused early instead of being answered after their clients gave up (issue 24 item 6,
   * ADR-0286). `/healthz` is never refused.
   */
  JR2_ERR_SERVICE_OVERLOADED: {
    status: 503,
    message: "the service is overloaded (its event loop lagged {lagMs} ms); retry in {retryAfter} s",
  },
  /**
   * The run store refuses writes (a full disk, an I/O error, a busy database): nothing was
   * answered as saved. Sent with `Retry-After` (seconds, also the `retryAfter` field); the
   * run's state is as last committed, so the same request re-sent later is decided afresh.
   */
  JR2_ERR_STORE_FAILING: {
    status: 503,
    message: "the run store is not accepting writes ({detail}); nothing was saved — retry in {retryAfter} s",
  },
  /**
   * The Harness's durable store refuses writes (a full disk, an I/O error under
   * `JR2_HARNESS_DATA_DIR`): the Submission was not admitted. Writes already queued are kept and
   * retried; the Harness admits again once a commit succeeds (ADR-0177). Sent with `Retry-After`.
   */
  JR2_ERR_HARNESS_STORE_FAILING: {
    status: 503,
    message:
      "the Harness store in {dataDir} is not accepting writes ({detail}); free space there (JR2_HARNESS_DATA_DIR) — retry in {retryAfter} s",
  },
  /**
   * This instance let go of the run (ADR-0280): another instance adopted it, or this one's lease
   * on it lapsed. Nothing was decided or saved here; send the request to the run's owner (the
   * next URL of a comma-separated list).
   */
  JR2_ERR_RUN_MOVED: {
    status: 503,
    message:
      "run `{runId}` is no longer hosted by this instance (its lease moved); retry against another instance",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
