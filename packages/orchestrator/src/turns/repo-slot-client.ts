import {
  type AttachRequest,
  type CheckoutAtRequest,
  DiffAnswer,
  type DiffRequest,
  ErrorBody,
  type ErrorCode,
  errorCodes,
  Jr2Error,
  PushAnswer,
  type PushRequest,
  SlotHandle,
} from "@jr2/wire";

/**
 * The Orchestrator's side of the Harness's `/workspaces/*` routes (issue 28 §2): it asks, the
 * Harness runs git; the Orchestrator never touches the work root.
 */
export interface RepoSlotClient {
  /**
   * Attaches one slot on the Harness at `harnessUrl`.
   * @throws Jr2Error `JR2_ERR_WORKSPACE_HARNESS_TOO_OLD` when the Harness answers 404 for the
   *   route (an older Harness), naming its URL and the version its /healthz reports; the
   *   Harness's own coded error (e.g. `JR2_ERR_WORKSPACE_URL_REFUSED`) otherwise
   */
  attach(harnessUrl: string, request: AttachRequest): Promise<SlotHandle>;
  /**
   * Retry (no `from`: the run's own branch reset) or fork (`from` the source run's slot) at a
   * commit (issue 28 §3). Same errors as attach, and `JR2_ERR_WORKSPACE_COMMIT_GONE`.
   */
  checkoutAt(harnessUrl: string, request: CheckoutAtRequest): Promise<SlotHandle>;
  /**
   * A slot's committed diff summary, files and commits (for `jr2 show`). Same errors as attach;
   * `timeoutMs` (default 15 min) bounds the wait (the branch view asks with a short one).
   */
  diff(harnessUrl: string, request: DiffRequest, timeoutMs?: number): Promise<DiffAnswer>;
  /** Pushes a slot's branch (publish). Same errors as attach. */
  push(harnessUrl: string, request: PushRequest): Promise<PushAnswer>;
}

/** How long a route is asked again while the Harness does not answer (a restart), ms. */
export const HARNESS_DOWN_WINDOW_MS = 60_000;

/**
 * The client over fetch with the Harness bearer (`JR2_HARNESS_TOKEN`). Every route is safe to
 * ask again (attach and push are idempotent per slot, checkout-at resets to one commit, diff
 * reads), so a Harness that does not answer — killed and restarting, the connection refused or
 * reset — or answers 503 is asked again with backoff (0.25 s doubling to 5 s) for
 * `downWindowMs` (default {@link HARNESS_DOWN_WINDOW_MS}) before the error is the caller's.
 * Why: the SIGKILL soak (bench/workspace-soak.mjs) found every run that attached or published
 * while its Harness restarted ending `failed` ("fetch failed").
 */
export function createRepoSlotClient(options: {
  token: string;
  fetch?: typeof fetch;
  downWindowMs?: number;
}): RepoSlotClient {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const windowMs = options.downWindowMs ?? HARNESS_DOWN_WINDOW_MS;
  // `timeoutMs` bounds each attempt and the whole window: a short ask (the branch view's) is not
  // stretched by the restart window.
  async function send(url: URL, body: unknown, timeoutMs: number): Promise<Response> {
    const deadline = Date.now() + Math.min(windowMs, timeoutMs);
    for (let n = 0; ; n++) {
      const wait = Math.min(5_000, 250 * 2 ** n);
      try {
        const res = await doFetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${options.token}`, "content-type": "application/json" },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (res.status !== 503 || Date.now() + wait > deadline) return res;
        await res.arrayBuffer().catch(() => undefined);
      } catch (error) {
        if ((error as Error).name === "TimeoutError" || Date.now() + wait > deadline) throw error;
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  }
  async function post<T>(
    harnessUrl: string,
    path: string,
    body: unknown,
    parse: (v: unknown) => T,
    timeoutMs = 15 * 60_000,
  ): Promise<T> {
    const url = new URL(path, harnessUrl.endsWith("/") ? harnessUrl : `${harnessUrl}/`);
    const res = await send(url, body, timeoutMs);
    const json: unknown = await res.json().catch(() => ({}));
    if (res.ok) return parse(json);
    const error = ErrorBody.safeParse(json);
    if (res.status === 404 && (!error.success || error.data.code === "JR2_ERR_ROUTE_NOT_FOUND"))
      throw new Jr2Error("JR2_ERR_WORKSPACE_HARNESS_TOO_OLD", {
        harness: harnessUrl,
        version: await harnessVersion(doFetch, harnessUrl),
      });
    // The Harness's coded refusal, passed on as it came (a caller branches on the code).
    if (error.success && error.data.code in errorCodes) {
      const { error: message, code, ...fields } = error.data;
      const coded = new Jr2Error(code as ErrorCode, fields);
      // An older Harness lacks a field this table's message names (`{slot}` of a refused URL):
      // its own words then, never a message with a placeholder left in it.
      const named = [...errorCodes[code as ErrorCode].message.matchAll(/\{(\w+)\}/g)];
      if (named.some(([, key]) => key !== undefined && fields[key] === undefined)) coded.message = message;
      throw coded;
    }
    throw new Jr2Error("JR2_ERR_WORKSPACE_GIT_FAILED", {
      command: `POST ${path}`,
      exit: res.status,
      stderr: error.success ? error.data.error : "(no coded answer)",
    });
  }
  return {
    attach: (harnessUrl, request) =>
      post(harnessUrl, "workspaces/attach", request, (v) => SlotHandle.parse(v)),
    diff: (harnessUrl, request, timeoutMs) =>
      post(harnessUrl, "workspaces/diff", request, (v) => DiffAnswer.parse(v), timeoutMs),
    checkoutAt: (harnessUrl, request) =>
      post(harnessUrl, "workspaces/checkout-at", request, (v) => SlotHandle.parse(v)),
    push: (harnessUrl, request) => post(harnessUrl, "workspaces/push", request, (v) => PushAnswer.parse(v)),
  };
}

async function harnessVersion(doFetch: typeof fetch, harnessUrl: string): Promise<string> {
  try {
    const res = await doFetch(new URL("healthz", harnessUrl.endsWith("/") ? harnessUrl : `${harnessUrl}/`));
    const body = (await res.json()) as { version?: unknown };
    return typeof body.version === "string" ? body.version : "unknown";
  } catch {
    return "unknown";
  }
}
