import { retryOnReset } from "@jr2/http-edge";
import { TRACEPARENT_HEADER } from "@jr2/telemetry";
import {
  AbortAnswer,
  Admission,
  Health,
  readStreamEvent,
  type StreamEvent,
  SubmissionArrival,
  type SubmissionRequest,
} from "@jr2/wire";

/**
 * The Orchestrator's client of the Harness wire (SPEC §7.1): admit, follow, abort.
 * Effects only; the Agent actor (agent-actor.ts) decides when to call what.
 * Every method returns data — transport trouble is a tagged result, never a throw — so the
 * Turn's mechanics can tell "provably never left the host" from "may have arrived" (§5.5).
 */

/** Where one Harness lives and the bearer the Orchestrator presents to it (§4.4). */
export interface HarnessEndpoint {
  url: string;
  token: string;
  /**
   * This Orchestrator instance's id on a shared store (ADR-0280), sent as `x-jr2-instance` on
   * every call: which instance sent what (the Harness ignores it). Absent: not sent.
   */
  instanceId?: string;
}

/** The header naming the Orchestrator instance that sent a Harness call (ADR-0280). */
export const INSTANCE_HEADER = "x-jr2-instance";

/** The answer to an admission attempt. `unsent`: the request provably never left the host. */
export type AdmitResult =
  | { kind: "admitted"; admission: Admission }
  | { kind: "lost" } // 404: `kept: true` on a conversation the Harness no longer holds
  /** `retryAfterS`: the answer's `Retry-After` in seconds, when it named one (a 503 "not now"). */
  | { kind: "refused"; status: number; body: unknown; retryAfterS?: number }
  | { kind: "unsent"; error: string }
  | { kind: "unknown"; error: string };

/**
 * One long-poll of the stream. Offsets are opaque strings, stored verbatim. `indices`: each
 * event's index in the page as the Harness sent it — an event this Orchestrator cannot read is
 * skipped (§7.6) but keeps its place, so positions stay the same however the stream is paged
 * (issue 11 "recorded once"); absent: `events` is the whole page.
 */
export type ReadResult =
  | { kind: "events"; events: StreamEvent[]; indices?: number[]; nextOffset: string }
  | { kind: "idle" } // 204: nothing new within `wait`
  | { kind: "lost" } // 404: unknown conversation (the Harness restarted)
  | { kind: "transport"; error: string };

/**
 * One read of the Harness's `/healthz` (§7.1). `up` with `bootId: undefined`: an older Harness
 * that does not tell its process apart (issue 16 "provably lost").
 */
export type HealthResult = { kind: "up"; bootId: string | undefined } | { kind: "down"; error: string };

/**
 * Whether a Submission named by its client-chosen id reached the Harness (ADR-0288).
 * `cannot-tell`: an older Harness without the route, or no answer.
 */
export type ArrivalResult =
  | { kind: "arrived"; admission: Admission; bootId: string | undefined }
  | { kind: "absent"; bootId: string | undefined }
  | { kind: "cannot-tell"; error: string };

/** How long one `/healthz` read may take, ms: a Harness that hangs reads as down. */
const HEALTH_TIMEOUT_MS = 5_000;

/** Error codes of a connection that provably never reached the peer. */
const NEVER_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EADDRNOTAVAIL", "ENETUNREACH"]);

function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause;
  return cause?.code ?? (error as { code?: string } | undefined)?.code;
}

function describe(error: unknown): string {
  const code = causeCode(error);
  const message = error instanceof Error ? error.message : String(error);
  return code ? `${code}: ${message}` : message;
}

function iidSegment(iid: string): string {
  return encodeURIComponent(iid);
}

/**
 * Creates a client for one Harness.
 * @param fetchImpl injectable for tests; defaults to the global fetch (undici).
 * @see SPEC §5.5 (following), §7.1 (the wire)
 */
export function createHarnessClient(endpoint: HarnessEndpoint, fetchImpl: typeof fetch = fetch) {
  // Reads, `/healthz`, arrival checks and aborts (an abort of an aborted conversation is a
  // no-op) are sent once more after a reset before any answer byte — the keep-alive race
  // (ADR-0288). An admission is never re-sent blindly: see `arrival`.
  const send = retryOnReset(fetchImpl, {
    idempotent: (method, url) => method === "GET" || url.endsWith("/abort"),
  });
  const base = endpoint.url.replace(/\/+$/, "");
  const headers: Record<string, string> = {
    authorization: `Bearer ${endpoint.token}`,
    ...(endpoint.instanceId ? { [INSTANCE_HEADER]: endpoint.instanceId } : {}),
  };

  /** `traceparent`: the Turn's trace context (ADR-0421), sent so the Harness continues the trace. */
  async function admit(iid: string, body: SubmissionRequest, traceparent?: string): Promise<AdmitResult> {
    let res: Response;
    try {
      res = await fetchImpl(`${base}/conversations/${iidSegment(iid)}/submissions`, {
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          ...(traceparent ? { [TRACEPARENT_HEADER]: traceparent } : {}),
        },
        body: JSON.stringify(body),
      });
    } catch (error) {
      const code = causeCode(error);
      return code && NEVER_SENT.has(code)
        ? { kind: "unsent", error: describe(error) }
        : { kind: "unknown", error: describe(error) };
    }
    const payload = await res.json().catch(() => undefined);
    if (res.status === 404) return { kind: "lost" };
    if (!res.ok) {
      const retryAfterS = Number(res.headers.get("retry-after") ?? Number.NaN);
      return {
        kind: "refused",
        status: res.status,
        body: payload,
        ...(Number.isFinite(retryAfterS) && retryAfterS >= 0 ? { retryAfterS } : {}),
      };
    }
    const admission = Admission.safeParse(payload);
    return admission.success
      ? { kind: "admitted", admission: admission.data }
      : { kind: "refused", status: res.status, body: payload };
  }

  async function read(
    iid: string,
    offset: string,
    waitSeconds: number,
    signal?: AbortSignal,
  ): Promise<ReadResult> {
    const url = `${base}/conversations/${iidSegment(iid)}/stream?offset=${encodeURIComponent(offset)}&wait=${waitSeconds}`;
    try {
      const res = await send(url, { headers, signal });
      if (res.status === 204) return { kind: "idle" };
      if (res.status === 404) return { kind: "lost" };
      if (!res.ok) return { kind: "transport", error: `HTTP ${res.status}` };
      const page = (await res.json()) as { events?: unknown[]; nextOffset?: unknown };
      if (typeof page.nextOffset !== "string" || !Array.isArray(page.events)) {
        return { kind: "transport", error: "malformed stream page" };
      }
      const events: StreamEvent[] = [];
      const indices: number[] = [];
      for (const [index, raw] of page.events.entries()) {
        const event = readStreamEvent(raw);
        if (event === undefined) continue;
        events.push(event);
        indices.push(index);
      }
      return { kind: "events", events, indices, nextOffset: page.nextOffset };
    } catch (error) {
      return { kind: "transport", error: describe(error) };
    }
  }

  async function abort(iid: string): Promise<{ ok: boolean; aborted?: boolean; error?: string }> {
    try {
      const res = await send(`${base}/conversations/${iidSegment(iid)}/abort`, {
        method: "POST",
        headers,
      });
      const parsed = AbortAnswer.safeParse(await res.json().catch(() => undefined));
      return res.ok && parsed.success
        ? { ok: true, aborted: parsed.data.aborted }
        : { ok: false, error: `HTTP ${res.status}` };
    } catch (error) {
      return { ok: false, error: describe(error) };
    }
  }

  /** Reads `/healthz` (open, no bearer needed; sent anyway). Never throws. */
  async function health(): Promise<HealthResult> {
    try {
      const res = await send(`${base}/healthz`, {
        headers,
        signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS),
      });
      if (!res.ok) return { kind: "down", error: `HTTP ${res.status}` };
      const parsed = Health.safeParse(await res.json().catch(() => undefined));
      if (!parsed.success) return { kind: "down", error: "malformed /healthz answer" };
      return { kind: "up", bootId: parsed.data.bootId };
    } catch (error) {
      return { kind: "down", error: describe(error) };
    }
  }

  /**
   * Asks whether the admission sent with `clientSubmissionId` reached the Harness (ADR-0288,
   * `GET /conversations/:iid/submissions/:id`). Any answer but a readable 200 is `cannot-tell`
   * (an older Harness answers 404 without the route). Never throws.
   */
  async function arrival(iid: string, clientSubmissionId: string): Promise<ArrivalResult> {
    try {
      const res = await send(
        `${base}/conversations/${iidSegment(iid)}/submissions/${encodeURIComponent(clientSubmissionId)}`,
        { headers, signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) },
      );
      const parsed = SubmissionArrival.safeParse(await res.json().catch(() => undefined));
      if (res.status !== 200 || !parsed.success)
        return {
          kind: "cannot-tell",
          error: `HTTP ${res.status}${parsed.success ? "" : " without an arrival answer"}`,
        };
      const { arrived, admission, bootId } = parsed.data;
      if (arrived && admission) return { kind: "arrived", admission, bootId };
      return arrived
        ? { kind: "cannot-tell", error: "arrived, but no admission given" }
        : { kind: "absent", bootId };
    } catch (error) {
      return { kind: "cannot-tell", error: describe(error) };
    }
  }

  // `health` and `arrival` are optional in the client's type: a client without them (a fake,
  // an older build) reads as a Harness that tells no bootId and cannot say what arrived.
  const optional: { health?: typeof health; arrival?: typeof arrival } = { health, arrival };
  return { endpoint, admit, read, abort, ...optional };
}

/** A client of one Harness. */
export type HarnessClient = ReturnType<typeof createHarnessClient>;
