import { AsyncLocalStorage } from "node:async_hooks";

/**
 * A tap on one model request's HTTP exchange. pi-ai builds its OpenAI client per request with
 * the global `fetch` and offers no hook on the raw chunks, so a scoped wrapper around the
 * global `fetch` watches the bytes — only for requests made inside {@link withFetchProbe};
 * every other fetch passes through untouched. What it records is what pi-ai drops: whether a
 * `finish_reason` came and which (C6, vLLM's `abort`), the usage and llama-server `timings`
 * objects as sent (C8), the status, `Retry-After` and error body of a refused request, a
 * transport error's code, and a body cut after its first bytes.
 * @see docs/adr/0151-pi-interception.md, docs/adr/0401-provider-failures.md
 */
export interface FetchProbe {
  sawFinishReason: boolean;
  /** The last non-null `finish_reason` of the stream. */
  finishReason?: string;
  /** The request URL (for messages; redacted where it is shown). */
  url?: string;
  status?: number;
  /** A 2xx answer's `content-type` (an HTML page or a JSON body is not a stream). */
  contentType?: string;
  /** `Retry-After` in ms (seconds or an HTTP date), when the server sent one. */
  retryAfterMs?: number;
  /** A non-2xx answer's body text (first 64 KiB), or an SSE `error` object's JSON. */
  errorBody?: string;
  /** fetch threw before any answer: the error code (`ECONNREFUSED`, …) or message. */
  transportError?: string;
  /** The transport error came from the network (a code such as `ECONNREFUSED`), not the request's shape. */
  networkError?: boolean;
  /** Response body bytes received. */
  bytes: number;
  /**
   * An SSE event's data was not JSON (a broken server or proxy): the body was failed before the
   * OpenAI client could read it (it would print the raw line, which may hold argument text, to
   * stderr).
   */
  badEvent?: boolean;
  /** The body failed after its first bytes (a cut socket): the error's code or message. */
  bodyError?: string;
  /** The last `usage` object seen (chunk-level or choice-level). */
  usage?: Record<string, unknown>;
  /** The last llama-server `timings` object seen. */
  timings?: Record<string, unknown>;
  /** Whether a delta of text, reasoning or a tool call has arrived (the first token). */
  sawToken?: boolean;
  /**
   * Told of every read of the body (`bytes`, SSE comments included) and of the first token
   * (`token`): the stream timers' view of a live stream (issue 25 §10, stream-timers.ts).
   */
  onProgress?: (kind: "bytes" | "token") => void;
}

/** A fresh, empty probe. */
export function newProbe(): FetchProbe {
  return { sawFinishReason: false, bytes: 0 };
}

const store = new AsyncLocalStorage<FetchProbe>();
const INSTALLED = Symbol.for("jr2.harness.fetchProbe");
const ERROR_BODY_CAP = 64 * 1024;
/** A longer SSE line is not read (a hostile or broken server); the bytes still pass through. */
const LINE_CAP = 4 * 1024 * 1024;

/** Installs the scoped wrapper once per process (idempotent). */
export function installFetchProbe(): void {
  const g = globalThis as unknown as Record<symbol, unknown>;
  if (g[INSTALLED]) return;
  g[INSTALLED] = true;
  const original = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const probe = store.getStore();
    if (!probe) return original(input, init);
    probe.url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    let res: Response;
    try {
      res = await original(input, init);
    } catch (err) {
      probe.transportError = errorCode(err);
      const e = err as { code?: unknown; cause?: { code?: unknown } };
      probe.networkError = typeof e?.cause?.code === "string" || typeof e?.code === "string";
      throw err;
    }
    probe.status = res.status;
    probe.retryAfterMs = retryAfter(res.headers.get("retry-after"));
    if (res.ok) probe.contentType = res.headers.get("content-type") ?? undefined;
    if (!res.body) return res;
    if (!res.ok) {
      probe.errorBody = await readCapped(res.clone());
      return res;
    }
    return new Response(watch(res.body, probe), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

/** Runs `fn` (which starts a model request) with `probe` watching its exchange. */
export function withFetchProbe<T>(probe: FetchProbe, fn: () => T): T {
  return store.run(probe, fn);
}

/** Passes the body through unchanged while reading its SSE `data:` lines into the probe. */
function watch(body: ReadableStream<Uint8Array>, probe: FetchProbe): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let line = "";
  const event = { data: [] as string[], size: 0 };
  const refuse = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    probe.badEvent = true;
    controller.error(new Error("an SSE event whose data is not JSON"));
    void reader.cancel().catch(() => {});
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (err) {
        probe.bodyError = errorCode(err);
        controller.error(err);
        return;
      }
      if (chunk.done) {
        readLine(line, probe);
        if (!eventLine(line, event) || !eventLine("", event)) return refuse(controller);
        controller.close();
        return;
      }
      probe.bytes += chunk.value.byteLength;
      probe.onProgress?.("bytes");
      const lines = (line + decoder.decode(chunk.value, { stream: true })).split("\n");
      line = lines.pop() ?? "";
      if (line.length > LINE_CAP) line = "";
      for (const l of lines) {
        readLine(l, probe);
        // The chunk that completes a bad event is never passed on: the client never parses it.
        if (!eventLine(l, event)) return refuse(controller);
      }
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * Feeds one SSE line into the event being read (SSE: `data:` lines joined by a newline, ended by
 * a blank line). Returns false when a finished event's data is neither JSON nor `[DONE]`.
 */
function eventLine(raw: string, event: { data: string[]; size: number }): boolean {
  const l = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
  if (l.startsWith("data:")) {
    const data = l.slice(l.startsWith("data: ") ? 6 : 5);
    event.size += data.length;
    // A hostile event past the cap is not held in memory; it is judged by what was kept.
    if (event.size <= LINE_CAP) event.data.push(data);
    return true;
  }
  if (l !== "") return true;
  const data = event.data.join("\n").trim();
  event.data = [];
  event.size = 0;
  if (data === "" || data.startsWith("[DONE]")) return true;
  try {
    JSON.parse(data);
    return true;
  } catch {
    return false;
  }
}

/** One SSE line: `data: {…}` updates the probe; anything else is ignored. */
function readLine(raw: string, probe: FetchProbe): void {
  const l = raw.trim();
  if (!l.startsWith("data:")) return;
  const data = l.slice(5).trim();
  if (data === "" || data === "[DONE]") return;
  let chunk: Record<string, unknown>;
  try {
    chunk = JSON.parse(data) as Record<string, unknown>;
  } catch {
    return;
  }
  if (!chunk || typeof chunk !== "object") return;
  // `{"error":{…}}` (vLLM, SGLang, llama-server) or an error object at the event's top level
  // (`{"object":"error","message":…}`): the server's own words ride the retry and the fault.
  if (isObject(chunk.error) || isTopLevelError(chunk)) probe.errorBody = JSON.stringify(chunk);
  if (isObject(chunk.usage)) probe.usage = chunk.usage;
  if (isObject(chunk.timings)) probe.timings = chunk.timings;
  const choice = Array.isArray(chunk.choices) ? (chunk.choices[0] as Record<string, unknown>) : undefined;
  if (!isObject(choice)) return;
  if (!isObject(chunk.usage) && isObject(choice.usage)) probe.usage = choice.usage;
  if (!probe.sawToken && isToken(choice.delta)) {
    probe.sawToken = true;
    probe.onProgress?.("token");
  }
  if (typeof choice.finish_reason === "string" && choice.finish_reason !== "") {
    probe.sawFinishReason = true;
    probe.finishReason = choice.finish_reason;
  }
}

/** A delta carrying something the model produced: text, reasoning or a tool call (not the role alone). */
function isToken(delta: unknown): boolean {
  if (!isObject(delta)) return false;
  const text = (v: unknown) => typeof v === "string" && v !== "";
  return (
    text(delta.content) ||
    text(delta.reasoning) ||
    text(delta.reasoning_content) ||
    (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0)
  );
}

/** An event that is itself an error object: `object: "error"`, or a message with no choices. */
function isTopLevelError(chunk: Record<string, unknown>): boolean {
  if (chunk.object === "error") return true;
  return !("choices" in chunk) && typeof chunk.message === "string" && ("code" in chunk || "type" in chunk);
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A transport error's code (`ECONNREFUSED`, `UND_ERR_SOCKET`, …), else its message. */
function errorCode(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (e?.name === "AbortError") return "aborted";
  return e?.cause?.code ?? e?.code ?? e?.message ?? String(err);
}

/** `Retry-After`: seconds, or an HTTP date; `undefined` when absent or unreadable. */
function retryAfter(raw: string | null): number | undefined {
  if (raw === null || raw.trim() === "") return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < ERROR_BODY_CAP) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // A body cut while reading the error: what came is enough.
  } finally {
    void reader.cancel().catch(() => {});
  }
  return text.slice(0, ERROR_BODY_CAP);
}
