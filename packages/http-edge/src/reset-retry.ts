/**
 * The keep-alive race on the client side (issue 24 item 5, ADR-0288): a client that sends on a
 * pooled socket the server is closing meets `ECONNRESET`, `EPIPE` or undici's
 * `UND_ERR_SOCKET` ("other side closed") before any byte of the answer. ADR-0285 made the
 * servers keep idle sockets longer than the clients pool them; this is the other half: an
 * idempotent request met by such a reset is sent once more, on a fresh socket. A request that
 * is not idempotent is never re-sent here (its caller decides, e.g. by asking the server
 * whether it arrived).
 *
 * fetch rejects with these codes only before the answer's headers; a reset while the body is
 * read surfaces from the body's read, which is not retried. Whether the socket was a reused
 * one is not visible through fetch: a fresh socket reset before any answer is retried once
 * too, which is as safe for an idempotent request.
 */

/** Transport codes of a socket closed under a request before any answer byte. */
export const RESET_CODES: ReadonlySet<string> = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET"]);

/** Methods a retry may repeat (RFC 9110 §9.2.2). */
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

/** Whether `error` (a fetch rejection) is a socket reset before the answer began. */
export function isResetBeforeAnswer(error: unknown): boolean {
  for (
    let e = error as { code?: unknown; cause?: unknown; message?: unknown } | undefined, depth = 0;
    e && depth < 4;
    depth++
  ) {
    if (typeof e.code === "string" && RESET_CODES.has(e.code)) return true;
    if (typeof e.message === "string" && e.message.includes("other side closed")) return true;
    e = e.cause as typeof e;
  }
  return false;
}

/** What {@link retryOnReset} may be told. */
export interface ResetRetryOptions {
  /**
   * Whether a request may be sent twice. Default: its method is GET, HEAD, OPTIONS, PUT or
   * DELETE. A caller whose POST is idempotent by its own key (a pick's `toolCallId`, a run
   * start's `Idempotency-Key`) says so here.
   */
  idempotent?(method: string, url: string, init: RequestInit | undefined): boolean;
  /** Told of each re-send (the reset's message), for a log line. */
  onRetry?(url: string, error: string): void;
}

/** A body fetch can send again as it is (a stream is spent by the first send). */
function replayable(body: RequestInit["body"]): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === "string" ||
    body instanceof Uint8Array ||
    body instanceof URLSearchParams
  );
}

/**
 * Wraps `fetchImpl`: an idempotent request whose fetch rejected with a reset before any answer
 * byte ({@link isResetBeforeAnswer}) is sent once more; a second reset, any other error, an
 * aborted signal or a non-idempotent request rejects as before. Never changes an answer.
 * @param fetchImpl - the fetch to wrap (undici's global by default at the call sites)
 * @returns a fetch with the same contract
 */
export function retryOnReset(fetchImpl: typeof fetch, options: ResetRetryOptions = {}): typeof fetch {
  const idempotent = options.idempotent ?? ((method: string) => IDEMPOTENT_METHODS.has(method.toUpperCase()));
  const wrapped = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
    try {
      return await fetchImpl(input, init);
    } catch (error) {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      const method = init?.method ?? (typeof input === "object" && "method" in input ? input.method : "GET");
      if (
        init?.signal?.aborted ||
        !isResetBeforeAnswer(error) ||
        !replayable(init?.body) ||
        !idempotent(method, url, init)
      )
        throw error;
      options.onRetry?.(
        url,
        error instanceof Error
          ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ""}`
          : String(error),
      );
      return fetchImpl(input, init);
    }
  };
  return wrapped as typeof fetch;
}
