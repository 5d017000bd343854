import type { FaultCause } from "@jr2/wire";
import type { FetchProbe } from "./fetch-probe.js";

/**
 * What one failed model request means (issue 10 §3): retry the same bytes (a mid-stream
 * failure), wait for the endpoint (down or loading), or give up with a {@link FaultCause} a
 * workflow routes on. Pure: a function of the wire probe and pi-ai's own error text.
 * @see SPEC §5.6; docs/adr/0401-provider-failures.md
 */
export type Verdict =
  /** A mid-stream failure: retried with the same bytes, bounded by `retry.attempts`. */
  | { kind: "retry"; cause: "stream-cut"; message: string }
  /** The endpoint is down or loading: waited for, bounded by `retry.maxWaitMs`. */
  | { kind: "wait"; cause: "unavailable"; message: string; retryAfterMs?: number }
  /** Never retried. `cause` is absent when no class fits (e.g. `content_filter`). */
  | { kind: "fatal"; cause: FaultCause | undefined; message: string };

/** Where a request went and for which model entry; every message names both. */
export interface RequestSite {
  /** The model entry's name in the table. */
  entry: string;
  /** The model id sent upstream. */
  id: string;
  baseUrl: string;
  maxTokens: number;
  contextWindow: number;
}

/** Statuses that mean "down or loading": waited for. */
const WAIT_STATUSES = new Set([429, 502, 503, 504]);

/** Finish reasons a server uses for an answer it cut itself (vLLM's engine abort). */
const CUT_FINISH = new Set(["abort", "error"]);

const OVERFLOW =
  /maximum context length|maximum model length|exceeds? the (available )?context|context (length|window|size)|too many tokens|prompt is too long|is longer than the maximum/i;

/** llama-server's in-stream error for model output its chat parser cannot read (b9821: peg-native). */
const UNPARSABLE =
  /model produced output that does not match the expected|failed to parse (the )?model output/i;

/**
 * Classifies a model request that did not end in a usable answer.
 * @param probe what the wire showed; `piError` pi-ai's error text (its last word, e.g. "terminated").
 */
export function classify(probe: FetchProbe, piError: string | undefined, site: RequestSite): Verdict {
  const where = describeSite(site);
  if (probe.status !== undefined && probe.status >= 400) return classifyStatus(probe, site, where);
  if (probe.errorBody !== undefined) {
    // An error object inside the SSE stream (llama-server can send one after the headers).
    const body = readErrorBody(probe.errorBody);
    if (isOverflow(body)) return overflow(body, site, where);
    // The model's output, not the transport: the same bytes regenerate a whole answer that
    // likely fails alike. Never retried; the Orchestrator nudges once (issue 25 §13).
    if (UNPARSABLE.test(body.text))
      return {
        kind: "fatal",
        cause: "unparsable-output",
        message: `${where}: the server could not read the model's answer as a tool call — ${body.text}`,
      };
    return {
      kind: "retry",
      cause: "stream-cut",
      message: `${where}: ${STREAM_ERROR} — ${body.text}`,
    };
  }
  if (probe.status === undefined && (probe.url === undefined || probe.networkError === false))
    // No request left (a URL fetch refuses, such as one with credentials): configuration.
    return {
      kind: "fatal",
      cause: "bad-request",
      message: `${where}: the request could not be sent (${probe.transportError ?? piError ?? "not sent"}); check the model entry's baseUrl`,
    };
  if (probe.status === undefined) {
    const what = probe.transportError ?? piError ?? "no answer";
    return { kind: "wait", cause: "unavailable", message: `${where}: cannot reach the endpoint (${what})` };
  }
  if (probe.badEvent)
    // A `data:` event that is not JSON (a broken proxy or server): retried, bounded.
    return {
      kind: "retry",
      cause: "stream-cut",
      message: `${where}: the stream carried an event whose data is not JSON, after ${probe.bytes} bytes`,
    };
  if (probe.bodyError !== undefined)
    return {
      kind: "retry",
      cause: "stream-cut",
      message: `${where}: the stream was cut after ${probe.bytes} bytes (${probe.bodyError})`,
    };
  if (probe.finishReason !== undefined && CUT_FINISH.has(probe.finishReason))
    return {
      kind: "retry",
      cause: "stream-cut",
      message: `${where}: the server ended the answer with finish_reason "${probe.finishReason}"`,
    };
  if (!probe.sawFinishReason && probe.contentType !== undefined && !/event-stream/i.test(probe.contentType))
    // A web page (a UI or proxy at the baseUrl) or a JSON body (a server that ignored
    // `stream: true`): retrying the same request gets the same answer.
    return {
      kind: "fatal",
      cause: "bad-request",
      message: `${where}: HTTP ${probe.status} answered with content-type ${probe.contentType.slice(0, 80)}, not an event stream; check that the model entry's baseUrl is the OpenAI-compatible API (usually ending in /v1) and that the server streams`,
    };
  if (!probe.sawFinishReason)
    return {
      kind: "retry",
      cause: "stream-cut",
      message: `${where}: the stream ended without a finish reason (${piError ?? "closed"})`,
    };
  return { kind: "fatal", cause: undefined, message: `${where}: ${piError ?? "the model request failed"}` };
}

function classifyStatus(probe: FetchProbe, site: RequestSite, where: string): Verdict {
  const status = probe.status as number;
  const body = readErrorBody(probe.errorBody ?? "");
  // The server's own closing period is dropped: the advice that follows starts a sentence.
  const said = body.text ? ` — ${body.text.replace(/\.+$/, "")}` : " (no body)";
  if (WAIT_STATUSES.has(status))
    return {
      kind: "wait",
      cause: "unavailable",
      message: `${where}: HTTP ${status}${said}`,
      ...(probe.retryAfterMs !== undefined ? { retryAfterMs: probe.retryAfterMs } : {}),
    };
  if (isOverflow(body)) return overflow(body, site, where, status);
  if (status === 404 && /model/i.test(body.text))
    return {
      kind: "fatal",
      cause: "unknown-model",
      message: `${where}: HTTP 404${said}. The server does not serve the id \`${site.id}\`; set the entry's \`id\` to a name the server lists (vLLM: --served-model-name)`,
    };
  if (status === 500 && /pars|template|jinja/i.test(body.text))
    // llama-server answers 500 for a history its template cannot render: the request is bad.
    return {
      kind: "fatal",
      cause: "bad-request",
      message: `${where}: HTTP 500${said}. The server could not render this request; check its chat template and the model entry's compat settings`,
    };
  if (status >= 500)
    return { kind: "retry", cause: "stream-cut", message: `${where}: HTTP ${status}${said}` };
  if (status === 401 || status === 403)
    return {
      kind: "fatal",
      cause: "bad-request",
      message: `${where}: HTTP ${status}${said}. The server refused the key: set the model entry's \`apiKey\` to the server's key (vLLM and llama-server: --api-key)`,
    };
  if (status === 404 || status === 405)
    // No model named: the URL itself has no chat-completions route (a missing /v1, a web UI).
    return {
      kind: "fatal",
      cause: "bad-request",
      message: `${where}: HTTP ${status}${said}. Nothing answers chat completions at this URL: check the model entry's baseUrl (an OpenAI-compatible server's usually ends in /v1)`,
    };
  return {
    kind: "fatal",
    cause: "bad-request",
    message: `${where}: HTTP ${status}${said}. Retrying cannot fix this: check the server's chat template and flags and the model entry`,
  };
}

function overflow(body: ErrorBodyText, site: RequestSite, where: string, status?: number): Verdict {
  return {
    kind: "fatal",
    cause: "context-overflow",
    message: `${where}: ${status ? `HTTP ${status} — ` : ""}${body.text}. The conversation no longer fits the model's context (model entry \`${site.entry}\`: contextWindow ${site.contextWindow}, maxTokens ${site.maxTokens}); raise the server's context length or lower maxTokens`,
  };
}

/** An error body read for its words: `text` is the server's message (or the raw body). */
export interface ErrorBodyText {
  text: string;
  type?: string;
}

/**
 * Reads an OpenAI-compatible error body in both shapes: vLLM's top-level
 * `{object:"error", message, type, param, code}` and the nested `{error:{message, type, code}}`
 * (llama-server, OpenAI). Anything else is kept as text (first 500 characters).
 */
export function readErrorBody(raw: string): ErrorBodyText {
  const trimmed = raw.trim();
  if (trimmed === "") return { text: "" };
  try {
    const body = JSON.parse(trimmed) as Record<string, unknown>;
    const inner = (typeof body.error === "object" && body.error !== null ? body.error : body) as Record<
      string,
      unknown
    >;
    const message = typeof inner.message === "string" ? inner.message : undefined;
    const type = typeof inner.type === "string" ? inner.type : undefined;
    if (message !== undefined || type !== undefined)
      return { text: message ?? type ?? "", ...(type !== undefined ? { type } : {}) };
  } catch {
    // Not JSON: the text itself.
  }
  return { text: trimmed.length > 500 ? `${trimmed.slice(0, 500)}…` : trimmed };
}

function isOverflow(body: ErrorBodyText): boolean {
  return body.type === "exceed_context_size_error" || OVERFLOW.test(body.text);
}

/** How a retry's message begins when the stream itself carried the server's error event. */
const STREAM_ERROR = "the stream carried an error";

/**
 * A message for the warn log: an error event's words are the server's own (e.g. "CUDA out of
 * memory") and kept, cut at 300 characters (issue 25 §5); any other server text is dropped
 * ({@link withoutServerText}), since an error page or a 4xx body may echo the prompt.
 */
export function forLog(message: string): string {
  if (!message.includes(`${STREAM_ERROR} — `)) return withoutServerText(message);
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

/**
 * A message without the server's own words (everything after ` — `), for log lines, which carry
 * no prompt or argument text and a server may echo either.
 */
export function withoutServerText(message: string): string {
  return message.split(" — ")[0] ?? message;
}

/** `model request to <url> (model entry \`name\`, id \`id\`)`, the URL without keys or query. */
export function describeSite(site: RequestSite): string {
  return `model request to ${chatUrl(site.baseUrl)} (model entry \`${site.entry}\`, id \`${site.id}\`)`;
}

/** The chat-completions URL of a base URL, with no user info, query or fragment. */
export function chatUrl(baseUrl: string): string {
  try {
    const u = new URL(baseUrl);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, "")}/chat/completions`;
  } catch {
    return "(unparseable baseUrl)";
  }
}
