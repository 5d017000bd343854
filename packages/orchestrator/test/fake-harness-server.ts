/**
 * A fake Harness on a real HTTP port (127.0.0.1, port 0) that speaks exactly the wire of
 * @jr2/wire (§7.1): admissions, the long-polled stream, abort, `/healthz` with a `bootId`.
 * Each admission's stream events come from the test's `script`; a script may also make the
 * "process" die mid-admission (the socket is destroyed unanswered — the client sees
 * `UND_ERR_SOCKET` — and the fake comes back with a new bootId and no conversations).
 * It answers whether a Submission arrived by its `clientSubmissionId` (ADR-0288) unless told
 * to act as an older Harness (`tellsArrival: false`).
 * Tests drive the shipped Harness client and Turn driver against it.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { StreamEvent, SubmissionRequest } from "@jr2/wire";

/** A stream event as a script writes it: the fake stamps the Submission's id. */
export type ScriptedEvent = StreamEvent extends infer E
  ? E extends { submissionId: string }
    ? Omit<E, "submissionId">
    : never
  : never;

/**
 * What one admission does. `events`: seat it, answer the admission, then append the events.
 * `die`: the process dies before seating it (socket destroyed, new bootId, nothing kept).
 * `cut`: seats it and appends the events, but the answer never reaches the client (the
 * socket is destroyed after seating; same process, same bootId).
 * `drop`: the socket is destroyed before seating it (same process, nothing seated).
 * `reset: true` (cut, drop): a TCP reset instead of a close — the keep-alive race (ADR-0288).
 */
export type AdmissionBehaviour =
  | { kind: "events"; events: readonly ScriptedEvent[] }
  | { kind: "die" }
  | { kind: "cut"; events: readonly ScriptedEvent[]; reset?: true }
  | { kind: "drop"; reset?: true }
  /** Answers the admission with this HTTP status and JSON body (a refusal, issue 29 skew). */
  | { kind: "refuse"; status: number; body: unknown; headers?: Record<string, string> };

export interface AdmissionSeen {
  iid: string;
  body: SubmissionRequest;
  /** The bootId of the process that took the request. */
  bootId: string;
}

export interface FakeHarnessOptions {
  /** Decides each admission (`n` counts from 0 over the fake's life). */
  script(admission: AdmissionSeen, n: number): AdmissionBehaviour;
  /** `false`: `/healthz` carries no bootId (an older Harness). Default true. */
  tellsBootId?: boolean;
  /**
   * Answers `POST /workspaces/<route>` (issue 28's Repo Slot routes) with 200 and this value;
   * absent: 404, as an older Harness.
   */
  workspaces?(route: string, body: Record<string, unknown>): unknown;
  /**
   * `false`: no `GET /conversations/:iid/submissions/:id` route and no dedupe of a repeated
   * `clientSubmissionId` (a Harness older than ADR-0288). Default true.
   */
  tellsArrival?: boolean;
}

/** Starts a fake Harness; `close()` when done. */
export async function startFakeHarness(options: FakeHarnessOptions) {
  const streams = new Map<string, StreamEvent[]>();
  const admissions: AdmissionSeen[] = [];
  /**
   * Every call in arrival order: `admit <iid>`, `abort <iid>`, `admit-again <iid>` (a repeated
   * `clientSubmissionId` answered with its first admission).
   */
  const calls: string[] = [];
  /** The iid of each ask whether a Submission arrived (ADR-0288), in order. */
  const asks: string[] = [];
  /**
   * Every admission, stream read and abort in arrival order with the Orchestrator instance that
   * sent it (its `x-jr2-instance` header, ADR-0280; undefined without one).
   */
  const requests: Array<{ call: "admit" | "read" | "abort"; iid: string; instance: string | undefined }> = [];
  let bootId = randomBytes(8).toString("hex");
  /** `iid \0 clientSubmissionId` → the admission answered (this "process" only, ADR-0288). */
  const arrivals = new Map<string, { submissionId: string; offset: string; streamUrl: string }>();
  const tellsArrival = options.tellsArrival !== false;
  let down = false;
  let submissions = 0;
  let waiters: Array<() => void> = [];
  const wake = () => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const restart = () => {
    bootId = randomBytes(8).toString("hex");
    streams.clear();
    arrivals.clear();
    wake();
  };
  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = "";
      req.on("data", (chunk) => {
        text += chunk;
      });
      req.on("end", () => resolve(text));
    });

  async function onAdmit(req: IncomingMessage, res: ServerResponse, iid: string) {
    const body = JSON.parse(await readBody(req)) as SubmissionRequest;
    const key = `${iid}\u0000${body.clientSubmissionId ?? ""}`;
    const first = tellsArrival && body.clientSubmissionId ? arrivals.get(key) : undefined;
    if (first) {
      calls.push(`admit-again ${iid}`);
      json(res, 200, first);
      return;
    }
    const seen = { iid, body, bootId };
    const n = admissions.length;
    admissions.push(seen);
    calls.push(`admit ${iid}`);
    const behaviour = options.script(seen, n);
    if (behaviour.kind === "die") {
      req.socket.destroy();
      restart();
      return;
    }
    if (behaviour.kind === "drop") {
      if (behaviour.reset) req.socket.resetAndDestroy();
      else req.socket.destroy();
      return;
    }
    if (behaviour.kind === "refuse") {
      for (const [name, value] of Object.entries(behaviour.headers ?? {})) res.setHeader(name, value);
      json(res, behaviour.status, behaviour.body);
      return;
    }
    if (body.kept && !streams.has(iid)) {
      json(res, 404, { error: `no conversation \`${iid}\``, code: "JR2_ERR_CONVERSATION_NOT_FOUND", iid });
      return;
    }
    const log = streams.get(iid) ?? [];
    streams.set(iid, log);
    const submissionId = `s${++submissions}`;
    const offset = String(log.length);
    log.push({ type: "submission-started", submissionId, kind: body.kind });
    for (const event of behaviour.events) log.push({ ...event, submissionId } as StreamEvent);
    wake();
    const admission = { submissionId, offset, streamUrl: `/conversations/${encodeURIComponent(iid)}/stream` };
    if (tellsArrival && body.clientSubmissionId) arrivals.set(key, admission);
    if (behaviour.kind === "cut") {
      if (behaviour.reset) req.socket.resetAndDestroy();
      else req.socket.destroy();
      return;
    }
    json(res, 200, admission);
  }

  function onStream(res: ServerResponse, iid: string, query: URLSearchParams) {
    const from = Number(query.get("offset") ?? "0");
    const waitMs = Number(query.get("wait") ?? "0") * 1000;
    const tryAnswer = (): boolean => {
      const log = streams.get(iid);
      if (!log)
        json(res, 404, { error: `no conversation \`${iid}\``, code: "JR2_ERR_CONVERSATION_NOT_FOUND" });
      else if (log.length > from) json(res, 200, { events: log.slice(from), nextOffset: String(log.length) });
      else return false;
      return true;
    };
    if (tryAnswer()) return;
    const waiter = () => {
      if (res.writableEnded) return;
      if (tryAnswer()) clearTimeout(timer);
      else waiters.push(waiter);
    };
    const timer = setTimeout(() => {
      waiters = waiters.filter((w) => w !== waiter);
      if (res.writableEnded) return;
      res.writeHead(204);
      res.end();
    }, waitMs);
    waiters.push(waiter);
    res.on("close", () => clearTimeout(timer));
  }

  const server = createServer((req, res) => {
    req.socket.on("error", () => undefined);
    if (down) {
      req.socket.destroy();
      return;
    }
    const url = new URL(req.url ?? "/", "http://fake");
    const parts = url.pathname.split("/").filter(Boolean);
    if (url.pathname === "/healthz") {
      json(res, 200, { ok: true, version: "fake", ...(options.tellsBootId === false ? {} : { bootId }) });
      return;
    }
    if (parts[0] === "workspaces" && options.workspaces && req.method === "POST") {
      const answer = options.workspaces;
      void readBody(req).then((text) => json(res, 200, answer(parts[1] ?? "", JSON.parse(text))));
      return;
    }
    if (tellsArrival && parts[0] === "conversations" && parts[2] === "submissions" && parts.length === 4) {
      const iid = decodeURIComponent(parts[1] ?? "");
      const id = decodeURIComponent(parts[3] ?? "");
      asks.push(iid);
      const admission = arrivals.get(`${iid}\u0000${id}`);
      json(res, 200, admission ? { arrived: true, admission, bootId } : { arrived: false, bootId });
      return;
    }
    if (parts[0] !== "conversations" || parts.length !== 3) {
      json(res, 404, { error: "no route", code: "JR2_ERR_ROUTE_NOT_FOUND" });
      return;
    }
    const iid = decodeURIComponent(parts[1] ?? "");
    const instance = req.headers["x-jr2-instance"];
    const call = parts[2] === "submissions" ? "admit" : parts[2] === "stream" ? "read" : "abort";
    requests.push({ call, iid, instance: typeof instance === "string" ? instance : undefined });
    if (parts[2] === "submissions" && req.method === "POST") void onAdmit(req, res, iid);
    else if (parts[2] === "stream") onStream(res, iid, url.searchParams);
    else if (parts[2] === "abort" && req.method === "POST") {
      calls.push(`abort ${iid}`);
      json(res, 200, { aborted: streams.has(iid) });
    } else json(res, 404, { error: "no route", code: "JR2_ERR_ROUTE_NOT_FOUND" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    admissions,
    calls,
    asks,
    requests,
    get bootId() {
      return bootId;
    },
    /** Appends an event to a conversation's stream (a later model step). */
    push(iid: string, event: StreamEvent) {
      streams.get(iid)?.push(event);
      wake();
    },
    /** While down, every request's socket is destroyed unanswered (a dead process). */
    setDown(value: boolean) {
      down = value;
    },
    async close() {
      wake();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type FakeHarness = Awaited<ReturnType<typeof startFakeHarness>>;
