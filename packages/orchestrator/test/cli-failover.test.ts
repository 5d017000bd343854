/**
 * Issue 15 "Clients reach a survivor": `jr2 --url A,B` (or `JR2_URL`) tries A first and moves
 * to B on a transport error or a 503 — `show`, `follow`, and a follow whose stream A drops —
 * while a 404 or a 409 from A is the answer. Real sockets on 127.0.0.1, port 0.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Writable } from "node:stream";
import type { RunDetail, RunFeedEvent } from "@jr2/wire";
import { afterEach, describe, expect, it } from "vitest";
import { call, followFeed, resolveTarget } from "../src/cli/client.js";
import { showCommand } from "../src/cli/show-command.js";

const TOKEN = "t".repeat(32);
const at = "2026-12-01T10:00:00.000Z";
const FEED: RunFeedEvent[] = [
  { seq: 0, at, type: "status", status: "running", value: "reviewing" },
  {
    seq: 1,
    at,
    type: "admission",
    child: "reviewing#coder",
    agent: "coder",
    kind: "task",
    allowed: ["approve"],
  },
  { seq: 2, at, type: "status", status: "done", value: "approved", outcome: "succeeded" },
];
const DETAIL: RunDetail = {
  runId: "r1",
  workflow: "review",
  status: "done",
  value: "approved",
  context: {},
  gates: [],
  turns: [],
  usage: { promptTokens: 10, cachedTokens: 0, completionTokens: 2 },
  updatedAt: at,
  outcome: "succeeded",
};

interface Instance {
  url: string;
  /** `METHOD path` of each request, in order. */
  seen: string[];
  close(): Promise<void>;
}
const open: Instance[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

async function instance(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Instance> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const inst: Instance = {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
  open.push(inst);
  return inst;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};
const sse = (res: ServerResponse, events: RunFeedEvent[]) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const e of events) res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
};

/** Instance B: the run `r1`, settled, its feed from `since`. */
const survivor = () =>
  instance((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/runs/r1") return json(res, 200, DETAIL);
    if (url.pathname === "/runs/r1/turns") return json(res, 200, { turns: [] });
    if (url.pathname === "/runs/r1/events") {
      sse(res, FEED.slice(Number(url.searchParams.get("since") ?? 0)));
      return res.end();
    }
    if (url.pathname === "/runs/r1/gates/g1/events") return json(res, 200, { moved: true });
    json(res, 404, { error: "no such route", code: "JR2_ERR_NOT_FOUND" });
  });

/** Instance A answering every request with `status` and a coded body. */
const answering = (status: number) =>
  instance((_req, res) => json(res, status, { error: `A says ${status}`, code: "JR2_ERR_TEST" }));

/** A URL nothing listens on. */
async function down(): Promise<string> {
  const gone = await instance(() => {});
  open.splice(open.indexOf(gone), 1);
  await gone.close();
  return gone.url;
}

async function show(urls: string, flags: string[] = []): Promise<string> {
  let text = "";
  const out = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  await showCommand(["r1", ...flags, "--url", urls, "--token", TOKEN], out);
  return text;
}

async function followAll(urls: string): Promise<RunFeedEvent[]> {
  const events: RunFeedEvent[] = [];
  for await (const e of followFeed(resolveTarget({ url: urls, token: TOKEN }, {}), "r1")) events.push(e);
  return events;
}

describe("jr2 with a list of Orchestrator URLs", () => {
  it("asks again after a 503 with Retry-After (a run moving between instances) instead of failing", async () => {
    let refused = 0;
    const moving = await instance((_req, res) => {
      if (refused++ < 2) {
        res.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
        return res.end(JSON.stringify({ error: "run r1 is moving", code: "JR2_ERR_RUN_MOVING" }));
      }
      json(res, 200, DETAIL);
    });
    const target = resolveTarget({ url: moving.url, token: TOKEN }, {});
    expect(await call<RunDetail>(target, "GET", "/runs/r1")).toMatchObject({ runId: DETAIL.runId });
    expect(moving.seen).toEqual(["GET /runs/r1", "GET /runs/r1", "GET /runs/r1"]);
  });

  it("show and follow reach B when A is down", async () => {
    const b = await survivor();
    const urls = `${await down()},${b.url}`;
    expect(JSON.parse(await show(urls, ["--json"]))).toMatchObject({ runId: "r1", status: "done" });
    expect(await show(urls)).toContain("succeeded");
    expect((await followAll(urls)).map((e) => e.seq)).toEqual([0, 1, 2]);
  });

  it("show and follow reach B when A answers 503", async () => {
    const a = await answering(503);
    const b = await survivor();
    expect(await show(`${a.url},${b.url}`)).toContain("succeeded");
    expect((await followAll(`${a.url},${b.url}`)).map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(a.seen[0]).toBe("GET /runs/r1");
    expect(b.seen).toContain("GET /runs/r1/events?since=0");
  });

  it("a follow whose stream A drops goes on at B from the next seq", async () => {
    const a = await instance((_req, res) => {
      sse(res, FEED.slice(0, 2));
      // A dies mid-stream: its socket is cut, and it answers nothing more.
      setTimeout(() => void a.close(), 50);
    });
    const b = await survivor();
    const events = await followAll(`${a.url},${b.url}`);
    expect(events.map((e) => e.seq)).toEqual([0, 1, 2]);
    // (and the run's detail, read once the stream ended: it decides whether the follow is done)
    expect(b.seen.filter((r) => r.startsWith("GET /runs/r1/events"))).toEqual([
      "GET /runs/r1/events?since=2",
    ]);
  });

  it("a follow whose stream A ends cleanly while stopping (a rolling restart) goes on at B, each event once", async () => {
    // A graceful stop ends every open feed stream (no final status), then answers 503 until gone.
    let served = false;
    const a = await instance((_req, res) => {
      if (served) return json(res, 503, { error: "stopping", code: "JR2_ERR_STOPPING" });
      served = true;
      sse(res, FEED.slice(0, 2));
      res.end();
    });
    const b = await survivor();
    const events = await followAll(`${a.url},${b.url}`);
    expect(events.map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(b.seen).toContain("GET /runs/r1/events?since=2");
  });

  it("a follow of a settled run whose stream ends with nothing after `since` stops (no endless reconnect)", async () => {
    const b = await survivor();
    const events: RunFeedEvent[] = [];
    for await (const e of followFeed(resolveTarget({ url: b.url, token: TOKEN }, {}), "r1", 3))
      events.push(e);
    expect(events).toEqual([]);
    expect(b.seen.filter((r) => r.startsWith("GET /runs/r1/events"))).toHaveLength(1);
  });

  it("takes A's 404 as the answer: show fails with A's error, B is not asked", async () => {
    const a = await answering(404);
    const b = await survivor();
    await expect(show(`${a.url},${b.url}`)).rejects.toThrow("A says 404 (JR2_ERR_TEST, HTTP 404)");
    await expect(followAll(`${a.url},${b.url}`)).rejects.toThrow("HTTP 404");
    expect(b.seen).toEqual([]);
  });

  it("takes A's 409 as the answer: a Gate answer refused by A is not re-sent to B", async () => {
    const a = await answering(409);
    const b = await survivor();
    const target = resolveTarget({ url: `${a.url},${b.url}`, token: TOKEN }, {});
    await expect(call(target, "POST", "/runs/r1/gates/g1/events", { type: "confirm" })).rejects.toThrow(
      "HTTP 409",
    );
    expect(a.seen).toEqual(["POST /runs/r1/gates/g1/events"]);
    expect(b.seen).toEqual([]);
  });

  it("sends a write to B when A refused the connection (it was never sent)", async () => {
    const b = await survivor();
    const target = resolveTarget({ url: `${await down()},${b.url}`, token: TOKEN }, {});
    expect(await call(target, "POST", "/runs/r1/gates/g1/events", { type: "confirm" })).toEqual({
      moved: true,
    });
    expect(b.seen).toEqual(["POST /runs/r1/gates/g1/events"]);
  });

  it("does not re-send a write A may have done (its connection reset after the request)", async () => {
    const a = await instance((_req, res) => res.socket?.destroy());
    const b = await survivor();
    const target = resolveTarget({ url: `${a.url},${b.url}`, token: TOKEN }, {});
    await expect(call(target, "POST", "/runs/r1/gates/g1/events", { type: "confirm" })).rejects.toThrow(
      `cannot reach the Orchestrator at ${a.url}, ${b.url}`,
    );
    expect(a.seen).toEqual(["POST /runs/r1/gates/g1/events"]);
    expect(b.seen).toEqual([]);
    // A read after the same reset goes on to B.
    expect(await call(target, "GET", "/runs/r1")).toMatchObject({ runId: "r1" });
    expect(b.seen).toEqual(["GET /runs/r1"]);
  });

  it("names every URL when none can be reached", async () => {
    const [x, y] = [await down(), await down()];
    await expect(show(`${x},${y}`)).rejects.toThrow(`cannot reach the Orchestrator at ${x}, ${y}`);
  });
});

describe("--url / JR2_URL lists at start", () => {
  it("keeps the list in order, trimmed, without trailing slashes", () => {
    const target = resolveTarget({ token: TOKEN }, { JR2_URL: " http://a:7400/ ,https://b:7400" });
    expect(target.url).toBe("http://a:7400,https://b:7400");
  });

  it.each([
    [{ url: "http://a:7400,b:7400" }, {}, "--url entry 2 `b:7400`"],
    [{}, { JR2_URL: "http://a:7400,,http://b:7400" }, "JR2_URL entry 2 `` is empty"],
    [{}, { JR2_URL: "http://a:7400,not a url" }, "JR2_URL entry 2 `not a url` is not a URL"],
    [{ url: "" }, {}, "--url is empty"],
    [{ url: "http://me:secret@a:7400" }, {}, "--url entry 1 `http://***@a:7400` carries a user or password"],
  ])("refuses %j %j naming the bad entry", (flags, env, named) => {
    expect(() => resolveTarget({ ...flags, token: TOKEN }, env)).toThrow(named);
  });
});
