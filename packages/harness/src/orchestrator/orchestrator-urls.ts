/**
 * The Orchestrator base URLs the Harness may reach (issue 15, ADR-0280 "Clients reach a
 * survivor"): `JR2_ORCHESTRATOR_URL` is one URL or a comma-separated list. One request is
 * tried on each in turn; a transport error (refused, reset, DNS, no answer in time) or a 503
 * moves on to the next, every other status is the answer. The caller's retry and backoff wrap
 * one whole pass over the list.
 */

/** Gives up on a URL whose answer to a read has not begun in this long when another is left (ms). */
export const DEFAULT_FAILOVER_AFTER_MS = 10_000;

/**
 * Gives up on a URL whose answer to a write (a pick) has not begun in this long when another is
 * left (ms). Longer than a live owner can take: its save is cut by the store's 30 s
 * `statement_timeout` (ADR-0280), so by then the host is hung (SIGSTOPped, frozen) and, if it
 * ever wakes, it finds its lease lost and answers nothing. Without it undici's 300 s
 * `headersTimeout` held the pick that long.
 */
export const DEFAULT_WRITE_FAILOVER_AFTER_MS = 60_000;

/**
 * Parses `raw` (`http://a:7400,http://b:7400`) into base URLs without a trailing `/`. Pure.
 * @param name - the variable named in an error, e.g. `JR2_ORCHESTRATOR_URL`
 * @throws Error naming the bad entry and its position, or the empty list
 */
export function parseOrchestratorUrls(raw: string, name = "JR2_ORCHESTRATOR_URL"): string[] {
  const entries = raw.split(",").map((e) => e.trim());
  if (entries.every((e) => e === ""))
    throw new Error(`${name} is empty: give one Orchestrator base URL or a comma-separated list`);
  return entries.map((entry, i) => {
    const problem = urlProblem(entry);
    if (problem)
      throw new Error(
        `${name} entry ${i + 1} \`${withoutUserInfo(entry)}\` ${problem}; give base URLs like http://orchestrator-a:7400,http://orchestrator-b:7400`,
      );
    return entry.replace(/\/+$/, "");
  });
}

/** `entry` as an error may show it: a `user:password@` part masked. */
function withoutUserInfo(entry: string): string {
  return entry.replace(/\/\/[^/@]*@/, "//***@");
}

/** Why `entry` is not an http(s) base URL, or `undefined`. */
function urlProblem(entry: string): string | undefined {
  if (entry === "") return "is empty (a stray comma?)";
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return "is not a URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return `has scheme ${url.protocol} (want http or https)`;
  if (url.search || url.hash) return "carries a query or fragment (want a base URL)";
  // fetch refuses such URLs, and error lines would carry the secret: the token is the bearer.
  if (url.username || url.password)
    return "carries a user or password (the sandbox token is sent as the bearer)";
  return undefined;
}

/** What {@link createFailoverFetch} is built from. */
export interface FailoverOptions {
  urls: readonly string[];
  fetch: typeof globalThis.fetch;
  /** See {@link DEFAULT_FAILOVER_AFTER_MS}; the last URL tried is waited for as long as the caller's signal allows. */
  failoverAfterMs?: number;
  /** See {@link DEFAULT_WRITE_FAILOVER_AFTER_MS}; the same for any method but GET. */
  writeFailoverAfterMs?: number;
}

/**
 * `(path, init) → Response`: one request, tried on each URL in list order starting from the
 * one that answered last (a dead first URL costs each later request nothing). Answers the
 * first response that is not 503, else the last 503. Stops at once when `init.signal` aborts.
 * A GET that has no answer within `failoverAfterMs` moves on (a paused host accepts
 * connections but never answers); any other method is waited for `writeFailoverAfterMs` — a
 * pick is answered only after its save, and it is safe to re-send (same `toolCallId`, §4.3) on
 * a transport error.
 * @throws Error listing each URL's transport error when none answered (or the caller's abort)
 */
export function createFailoverFetch(
  opts: FailoverOptions,
): (path: string, init?: RequestInit) => Promise<Response> {
  const failoverAfterMs = opts.failoverAfterMs ?? DEFAULT_FAILOVER_AFTER_MS;
  const writeFailoverAfterMs = opts.writeFailoverAfterMs ?? DEFAULT_WRITE_FAILOVER_AFTER_MS;
  let preferred = 0;
  return async (path, init = {}) => {
    const n = opts.urls.length;
    const errors: string[] = [];
    let unavailable: Response | undefined;
    for (let k = 0; k < n; k++) {
      const i = (preferred + k) % n;
      const url = opts.urls[i]!;
      const last = k === n - 1;
      try {
        // A pick waits for its receipt (its save) far longer than a read: only a hung host is left.
        const read = (init.method ?? "GET") === "GET";
        const res = await attempt(
          opts.fetch,
          `${url}${path}`,
          init,
          last ? undefined : read ? failoverAfterMs : writeFailoverAfterMs,
        );
        if (res.status !== 503 || last) {
          if (res.status !== 503) preferred = i;
          return res;
        }
        await res.body?.cancel().catch(() => undefined);
        unavailable = res;
      } catch (err) {
        if (init.signal?.aborted) throw err;
        errors.push(`${url}: ${transportMessage(err)}`);
      }
    }
    if (unavailable) return unavailable;
    throw new Error(errors.join("; "));
  };
}

/** One fetch whose wait for the answer's start is cut after `timeoutMs` (none: the caller's signal only). */
async function attempt(
  fetch: typeof globalThis.fetch,
  url: string,
  init: RequestInit,
  timeoutMs: number | undefined,
): Promise<Response> {
  if (timeoutMs === undefined) return fetch(url, init);
  const cut = new AbortController();
  const timer = setTimeout(() => cut.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, cut.signal]) : cut.signal;
  try {
    return await fetch(url, { ...init, signal });
  } catch (err) {
    throw cut.signal.aborted ? cut.signal.reason : err;
  } finally {
    clearTimeout(timer);
  }
}

/** `fetch failed` says nothing: undici's cause (`ECONNREFUSED …`) does. */
function transportMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
}
