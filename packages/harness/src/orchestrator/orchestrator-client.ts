import { retryOnReset } from "@jr2/http-edge";
import {
  ErrorBody,
  type PickIssue,
  type PickRequest,
  readPickAnswer,
  readSurface,
  type TolerantPickAnswer,
  type TolerantSurface,
} from "@jr2/wire";
import { createFailoverFetch, parseOrchestratorUrls } from "./orchestrator-urls.js";

/**
 * The Harness's calls to the Orchestrator (§4.2, §4.3), with the sandbox token. `trace` is the
 * Submission's `{ traceparent, tracestate? }` (ADR-0420), sent as headers so the Orchestrator's
 * spans of these reads and picks land in the Turn's trace; `{}` or absent sends none.
 */
export interface OrchestratorClient {
  /** Surface read with retries (§7.2 step 1): 250 ms → 5 s backoff within `budgetMs`. */
  readSurface(
    iid: string,
    opts: { budgetMs: number; signal?: AbortSignal; trace?: TraceHeaders },
  ): Promise<SurfaceResult>;
  /** One bounded surface read (§7.5): no retry; any failure is `failed`. */
  readSurfaceOnce(iid: string, timeoutMs: number, trace?: TraceHeaders): Promise<SurfaceResult>;
  /** A pick, re-sent with the same `toolCallId` on transport failure (§4.3); ignores aborts. */
  postPick(iid: string, pick: PickRequest, trace?: TraceHeaders): Promise<PickResult>;
}

/** `{ traceparent, tracestate? }` of the Submission span (or `{}`). */
export type TraceHeaders = Readonly<Record<string, string>>;

/** `client` with every call carrying `trace`: the view of the client one Submission uses. */
export function withTraceHeaders(client: OrchestratorClient, trace: TraceHeaders): OrchestratorClient {
  if (Object.keys(trace).length === 0) return client;
  return {
    readSurface: (iid, opts) => client.readSurface(iid, { ...opts, trace }),
    readSurfaceOnce: (iid, timeoutMs) => client.readSurfaceOnce(iid, timeoutMs, trace),
    postPick: (iid, pick) => client.postPick(iid, pick, trace),
  };
}

export type SurfaceResult =
  | { kind: "surface"; surface: TolerantSurface }
  | { kind: "gone" }
  | { kind: "failed"; message: string };

export type PickResult =
  | { kind: "answer"; answer: TolerantPickAnswer }
  /** A 400 with a coded body: the Orchestrator read the pick and refused it (never delivered). */
  | { kind: "refused"; code: string; message: string; issues: PickIssue[] | undefined }
  | { kind: "gone" }
  | { kind: "failed"; message: string };

export interface OrchestratorClientOptions {
  /**
   * Base URL, e.g. `http://127.0.0.1:7400`, or a comma-separated list of them: each request
   * fails over to the next on a transport error or a 503 (orchestrator-urls.ts, ADR-0280).
   */
  url: string;
  /** The sandbox token presented as a bearer (may be empty in tests). */
  token: string;
  fetch: typeof globalThis.fetch;
  /** Re-send budget for a pick in transit (ms, default 90 000). */
  pickBudgetMs?: number;
  /** Backoff bounds (ms): default 250 → 5000. */
  backoff?: { initialMs: number; maxMs: number };
  /** A URL with another after it is given up after this long without an answer (ms, default 10 000). */
  failoverAfterMs?: number;
  /** See `DEFAULT_WRITE_FAILOVER_AFTER_MS` (orchestrator-urls.ts): a pick's wait on a hung instance. */
  writeFailoverAfterMs?: number;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });

/** A response the Orchestrator would answer differently after a restart: retry it. */
const retryableStatus = (status: number) => status === 503 || status === 502 || status === 504;

/**
 * Builds the client. Every failure of a call is data (a `failed` or `gone` result), never a
 * throw; each attempt is one pass over the URL list, the backoff is between passes.
 * @throws Error naming the bad entry when `opts.url` is not a URL or a list of them
 * @see SPEC §4.3, §7.2, §7.4, §7.5
 */
export function createOrchestratorClient(opts: OrchestratorClientOptions): OrchestratorClient {
  const backoff = opts.backoff ?? { initialMs: 250, maxMs: 5000 };
  const headers = (json: boolean, trace: TraceHeaders = {}): Record<string, string> => ({
    ...trace,
    ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
    ...(json ? { "content-type": "application/json" } : {}),
  });
  const send = createFailoverFetch({
    urls: parseOrchestratorUrls(opts.url),
    // A surface read and a pick (the same `toolCallId` is one pick, §4.3) are sent once more at
    // once after a reset before any answer byte — the keep-alive race (ADR-0288) — instead of
    // waiting a backoff or faulting.
    fetch: retryOnReset(opts.fetch, { idempotent: () => true }),
    ...(opts.failoverAfterMs === undefined ? {} : { failoverAfterMs: opts.failoverAfterMs }),
    ...(opts.writeFailoverAfterMs === undefined ? {} : { writeFailoverAfterMs: opts.writeFailoverAfterMs }),
  });
  const agentPath = (iid: string, tail: string) => `/agents/${encodeURIComponent(iid)}/${tail}`;

  async function surfaceAttempt(
    iid: string,
    signal: AbortSignal | undefined,
    trace: TraceHeaders | undefined,
  ): Promise<SurfaceResult & { retry?: boolean }> {
    try {
      const res = await send(agentPath(iid, "surface"), { headers: headers(false, trace), signal });
      if (res.status === 404) return { kind: "gone" };
      if (!res.ok)
        return {
          kind: "failed",
          message: `surface answered ${res.status}`,
          retry: retryableStatus(res.status),
        };
      const surface = readSurface(await res.json());
      return surface ? { kind: "surface", surface } : { kind: "failed", message: "surface body unreadable" };
    } catch (err) {
      return { kind: "failed", message: err instanceof Error ? err.message : String(err), retry: true };
    }
  }

  return {
    async readSurface(iid, { budgetMs, signal, trace }) {
      const deadline = Date.now() + budgetMs;
      let delay = backoff.initialMs;
      for (;;) {
        const { retry, ...result } = await surfaceAttempt(iid, signal, trace);
        if (result.kind !== "failed" || !retry || signal?.aborted || Date.now() + delay > deadline)
          return result;
        await sleep(delay, signal);
        delay = Math.min(delay * 2, backoff.maxMs);
      }
    },
    async readSurfaceOnce(iid, timeoutMs, trace) {
      const { retry: _retry, ...result } = await surfaceAttempt(iid, AbortSignal.timeout(timeoutMs), trace);
      return result;
    },
    async postPick(iid, pick, trace) {
      const deadline = Date.now() + (opts.pickBudgetMs ?? 90_000);
      let delay = backoff.initialMs;
      for (;;) {
        let retry = true;
        let message = "";
        try {
          // No abort signal on purpose: a pick in flight always gets its receipt (§7.2 step 4).
          const res = await send(agentPath(iid, "picks"), {
            method: "POST",
            headers: headers(true, trace),
            body: JSON.stringify(pick),
          });
          if (res.status === 404) return { kind: "gone" };
          if (res.ok) {
            const answer = readPickAnswer(await res.json());
            if (answer) return { kind: "answer", answer };
            return { kind: "failed", message: "pick answer unreadable" };
          }
          if (res.status === 400) {
            const refused = readRefusal(await res.text());
            if (refused) return refused;
          }
          retry = retryableStatus(res.status);
          message = `picks answered ${res.status}`;
        } catch (err) {
          message = err instanceof Error ? err.message : String(err);
        }
        if (!retry || Date.now() + delay > deadline) return { kind: "failed", message };
        await sleep(delay);
        delay = Math.min(delay * 2, backoff.maxMs);
      }
    },
  };
}

/** A 400 body `{ error, code: "JR2_ERR_…", issues? }` as a refusal; `undefined` when not coded. */
function readRefusal(text: string): Extract<PickResult, { kind: "refused" }> | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = ErrorBody.safeParse(body);
  if (!parsed.success || !parsed.data.code.startsWith("JR2_ERR_")) return undefined;
  const raw = parsed.data.issues;
  const issues = Array.isArray(raw)
    ? raw.flatMap((i: unknown) => {
        if (typeof i !== "object" || i === null) return [];
        const { path, message } = i as { path?: unknown; message?: unknown };
        if (typeof message !== "string") return [];
        const parts = Array.isArray(path)
          ? path.filter((p): p is string | number => typeof p === "string" || typeof p === "number")
          : typeof path === "string"
            ? path.split("/").filter(Boolean)
            : [];
        return [{ path: parts, message }];
      })
    : undefined;
  return { kind: "refused", code: parsed.data.code, message: parsed.data.error, issues };
}
