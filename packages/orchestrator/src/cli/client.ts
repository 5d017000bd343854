import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { retryOnReset } from "@jr2/http-edge";
import { ErrorBody, type RunFeedEvent, RunFeedEvent as RunFeedEventSchema } from "@jr2/wire";
import { asInvoked } from "./invocation.js";

/**
 * The `jr2` CLI's client of a running Orchestrator: where it is and the instance token.
 * Resolution order: flags, then env (`JR2_URL`, `JR2_INSTANCE_TOKEN`), then the `jr2.env` file
 * `pnpm start` writes into the data dir (`JR2_DATA_DIR`, default `./.data`).
 * `url` is one base URL or a comma-separated list (several Orchestrators on one store,
 * ADR-0280): each request is tried on them in turn on a transport error or a 503.
 */
export interface CliTarget {
  url: string;
  token: string;
}

/** A URL with another after it is given up after this long without the answer's start (ms). */
export const FAILOVER_AFTER_MS = 10_000;

/** Reads `KEY=value` lines. */
function readEnvFile(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  const out: Record<string, string> = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** The `--url` and `--token` options every command that calls the Orchestrator takes (`parseArgs`). */
export const TARGET_OPTIONS = { url: { type: "string" }, token: { type: "string" } } as const;

/**
 * @throws Error naming what to set when no token can be found
 */
export function resolveTarget(flags: { url?: string; token?: string }, env: NodeJS.ProcessEnv): CliTarget {
  const envFile = join(resolve(env.JR2_DATA_DIR ?? ".data"), "jr2.env");
  const file = readEnvFile(envFile);
  const [url, source] =
    flags.url !== undefined
      ? [flags.url, "--url"]
      : env.JR2_URL !== undefined
        ? [env.JR2_URL, "JR2_URL"]
        : file.JR2_URL !== undefined
          ? [file.JR2_URL, `JR2_URL in ${envFile}`]
          : [`http://127.0.0.1:${env.JR2_PORT ?? 7400}`, "JR2_PORT"];
  const urls = parseUrlList(url, source);
  const token = flags.token ?? env.JR2_INSTANCE_TOKEN ?? file.JR2_INSTANCE_TOKEN;
  if (!token) {
    throw new Error(
      `no instance token: pass --token, set JR2_INSTANCE_TOKEN, or point JR2_DATA_DIR at the data dir of a stack \`pnpm start\` runs (looked for ${envFile})`,
    );
  }
  return { url: urls.join(","), token };
}

/**
 * `http://a:7400,http://b:7400` → base URLs without a trailing `/`. Pure.
 * @throws Error naming `source`, the bad entry and its position
 */
export function parseUrlList(raw: string, source: string): string[] {
  const entries = raw.split(",").map((e) => e.trim());
  if (entries.every((e) => e === "")) throw new Error(`${source} is empty: give the Orchestrator's URL`);
  return entries.map((entry, i) => {
    let problem: string | undefined;
    try {
      const u = new URL(entry);
      if (u.protocol !== "http:" && u.protocol !== "https:")
        problem = `has scheme ${u.protocol} (want http or https)`;
      else if (u.search || u.hash) problem = "carries a query or fragment (want a base URL)";
      else if (u.username || u.password) problem = "carries a user or password (pass the token with --token)";
    } catch {
      problem = entry === "" ? "is empty (a stray comma?)" : "is not a URL";
    }
    if (problem)
      throw new Error(
        `${source} entry ${i + 1} \`${entry.replace(/\/\/[^/@]*@/, "//***@")}\` ${problem}; give base URLs like http://a:7400,http://b:7400`,
      );
    return entry.replace(/\/+$/, "");
  });
}

/**
 * A read, or a start with its Idempotency-Key, sent once more at once after a reset before any
 * answer byte (the keep-alive race, ADR-0288); any other write is never re-sent here.
 */
const sendAgainOnReset = retryOnReset((input, init) => fetch(input, init), { idempotent: () => true });

/** Per list (`CliTarget.url`): the index that answered last, where the next request starts. */
const preferred = new Map<string, number>();

/** Transport errors raised before a request could be sent: safe to send elsewhere whatever it does. */
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * One request on the first of `target`'s URLs to answer: in list order from the one that
 * answered last; a 503 (the instance refused it) moves on, any other status is the answer. A
 * GET also moves on after any transport error, or after {@link FAILOVER_AFTER_MS} without its
 * answer beginning when another URL is left; any other method (a run started, a Gate answered)
 * moves on only when it was never sent (refused, DNS, unreachable): after a reset it may have
 * been done, and sending it again elsewhere could do it twice. When every URL answered 503 with
 * `Retry-After`, the pass is made again after the wait, for up to 30 s.
 * @returns the answer; the last 503 when every URL gave one
 * @throws Error `cannot reach the Orchestrator at …` naming each URL and its transport error
 */
async function send(target: CliTarget, path: string, init: RequestInit): Promise<Response> {
  const deadline = Date.now() + RETRY_503_FOR_MS;
  for (;;) {
    const res = await sendOnce(target, path, init);
    const wait = retryAfterMs(res);
    // A 503 with Retry-After is "not now" (a run moving between instances, a store failing):
    // nothing was done, so asking again after the wait is safe for a write too.
    if (wait === undefined || Date.now() + wait > deadline) return res;
    await res.body?.cancel().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** How long {@link send} keeps asking again after 503s with `Retry-After` (ms). */
const RETRY_503_FOR_MS = 30_000;

/** A 503's `Retry-After` in ms (at most 5 s a wait), or undefined for any other answer. */
function retryAfterMs(res: Response): number | undefined {
  if (res.status !== 503) return undefined;
  const seconds = Number(res.headers.get("retry-after"));
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 5) * 1000 : undefined;
}

/** One pass of {@link send} over the URL list. */
async function sendOnce(target: CliTarget, path: string, init: RequestInit): Promise<Response> {
  const urls = target.url.split(",");
  // A start carrying an Idempotency-Key is as safe to send again as a read (ADR-0282).
  const read =
    (init.method ?? "GET") === "GET" ||
    (init.headers as Record<string, string> | undefined)?.["idempotency-key"] !== undefined;
  const start = preferred.get(target.url) ?? 0;
  const errors: string[] = [];
  let unavailable: Response | undefined;
  for (let k = 0; k < urls.length; k++) {
    const i = (start + k) % urls.length;
    const last = k === urls.length - 1;
    const cut = new AbortController();
    const timer = last || !read ? undefined : setTimeout(() => cut.abort(), FAILOVER_AFTER_MS);
    try {
      const res = await (read ? sendAgainOnReset : fetch)(`${urls[i]}${path}`, {
        ...init,
        signal: cut.signal,
      });
      if (res.status !== 503 || last) {
        if (res.status !== 503) preferred.set(target.url, i);
        return res;
      }
      await res.body?.cancel().catch(() => undefined);
      unavailable = res;
    } catch (error) {
      const cause = (error as Error).cause;
      const why = cut.signal.aborted ? `no answer within ${FAILOVER_AFTER_MS} ms` : String(cause ?? error);
      errors.push(urls.length === 1 ? why : `${urls[i]}: ${why}`);
      const code = (cause as { code?: unknown } | undefined)?.code;
      if (!read && !NOT_SENT.has(String(code))) break;
    } finally {
      clearTimeout(timer);
    }
  }
  if (unavailable) return unavailable;
  throw new Error(
    `cannot reach the Orchestrator at ${urls.join(", ")} (${errors.join("; ")}); is it running?`,
  );
}

/**
 * An HTTP answer that was not 2xx, with the Orchestrator's coded body. Its message names the
 * commands the body quotes as the user runs the CLI (`pnpm jr2 history …`, {@link asInvoked}).
 */
export class CliHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody | undefined,
  ) {
    super(body ? `${asInvoked(body.error)} (${body.code}, HTTP ${status})` : `HTTP ${status}`);
  }
}

/**
 * Calls one route; answers the parsed JSON body or throws {@link CliHttpError}. `headers` are
 * sent besides the CLI's own (a run start's `idempotency-key`, which also makes it re-sendable).
 */
export async function call<T>(
  target: CliTarget,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const res = await send(target, path, {
    method,
    headers: {
      ...headers,
      authorization: `Bearer ${target.token}`,
      // Who answers a Gate is on the run's feed (`gate-answered.by`, ADR-0256).
      "x-jr2-client": "cli",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const payload = await res.json().catch(() => undefined);
  if (!res.ok) {
    const parsed = ErrorBody.safeParse(payload);
    throw new CliHttpError(res.status, parsed.success ? parsed.data : undefined);
  }
  return payload as T;
}

/**
 * Follows a run's feed (`GET /runs/:runId/events`, SSE) and yields each event until the run
 * really settled: a `status` event that is not `running` is yielded like any other (a retried
 * or resumed run's log holds earlier ones), and each time a stream ends the run's detail
 * (`GET /runs/:id`, read once the log is caught up) decides — still running: read on from the
 * last seen seq; else the follow ends (issue 22 §1). Reconnects after a dropped connection, or
 * while every URL answers 503, from the last seen seq — through the whole URL list, so a
 * follow moves to a surviving Orchestrator when the one it read from dies.
 * @param from - the first seq to read (a control's own log entry: what came before is not followed)
 * @throws Error `cannot reach the Orchestrator at …` when the first connection fails (no
 *   Orchestrator: say so at once, as {@link call} does; retrying is for one that restarts)
 */
export async function* followFeed(target: CliTarget, runId: string, from = 0): AsyncGenerator<RunFeedEvent> {
  let since = from;
  let settledLast = false;
  let connected = false;
  for (let attempt = 0; attempt < 30; attempt++) {
    const before = since;
    let res: Response;
    try {
      res = await send(target, `/runs/${encodeURIComponent(runId)}/events?since=${since}`, {
        headers: { authorization: `Bearer ${target.token}`, accept: "text/event-stream" },
      });
    } catch (error) {
      if (!connected) throw error;
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    if (res.status === 503 && connected) {
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    connected = true;
    if (!res.ok || !res.body) {
      const payload = await res.json().catch(() => undefined);
      const parsed = ErrorBody.safeParse(payload);
      throw new CliHttpError(res.status, parsed.success ? parsed.data : undefined);
    }
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let cut = buffer.indexOf("\n\n");
        while (cut !== -1) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          cut = buffer.indexOf("\n\n");
          const data = frame
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trimStart())
            .join("\n");
          if (!data) continue;
          const event = RunFeedEventSchema.safeParse(JSON.parse(data));
          // Already yielded (a live run's stream ends with its final status, even one seen).
          if (!event.success || event.data.seq < since) continue;
          since = event.data.seq + 1;
          settledLast = event.data.type === "status" && event.data.status !== "running";
          yield event.data;
        }
      }
      // The stream ended: the run settled (its final status came), the instance stopped (a
      // graceful stop ends every feed stream) or let the run go. A settled status in the middle
      // of the log is no end (a retried or resumed run goes on, issue 22 rule "Follow's end"):
      // the run's detail, read now the log is caught up, decides.
      // A settled run whose stream brought events but not a settled status last (an instance
      // stopping as it settled) is read once more: the log is caught up first.
      if (!(await stillRunning(target, runId)) && (since === before || settledLast)) return;
      // Progress: the reconnect budget starts again; none: a short breath before asking again.
      if (since !== before) attempt = -1;
      else await new Promise((r) => setTimeout(r, 250));
    } catch {
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/**
 * Whether the run is still `running` by its detail (any instance of the list). A failed read
 * answers true: the follow goes on trying within its reconnect budget.
 */
async function stillRunning(target: CliTarget, runId: string): Promise<boolean> {
  try {
    const detail = await call<{ status?: string }>(target, "GET", `/runs/${encodeURIComponent(runId)}`);
    return detail.status === "running";
  } catch {
    return true;
  }
}
