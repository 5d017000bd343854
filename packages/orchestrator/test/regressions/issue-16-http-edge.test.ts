/**
 * Regression (issue 16 §6, §7 — the Orchestrator's HTTP edge).
 * Root causes: Fastify's `requestTimeout: 0` left no request deadline and Node's header
 * deadline was only checked every 30 s, and nothing bounded connections, so 3,000 half-sent
 * requests stayed open for 75 s; Node's parser errors (a garbage request line, headers over
 * 16 KiB) went through Fastify's default `clientErrorHandler`, which answers without `code`;
 * a body refused at the limit closed the socket with the rest unread, so a client still
 * sending its chunked body got a TCP reset instead of the 413.
 * Fixed in @jr2/http-edge (server options, connection bound, coded client errors, draining
 * a refused body) and plugins/errors.ts.
 * The SSE and slow-save cases prove the timeouts time only a request's *arrival*: a run feed
 * or a pick answered after the request timeout still arrives whole.
 */
import { connect } from "node:net";
import { ORCHESTRATOR_HTTP_EDGE_ENV, readHttpEdgeLimits } from "@jr2/http-edge";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it, vi } from "vitest";
import { chunkedRequest, rawExchange } from "../../../harness/test/fixtures/raw-http.js";
import { buildOrchestrator, createMemoryStore, type RunStore } from "../../src/index.js";
import { agentUrl, flow, INSTANCE_TOKEN } from "../http/fixture.js";

const auth = { authorization: `Bearer ${INSTANCE_TOKEN}` };
/** Lowered so the slow-client cases finish in a few seconds (issue 16 "Timeouts"). */
const LOW = { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 300, maxConnections: 64 };

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function listening(httpEdge = LOW, store?: RunStore): Promise<string> {
  app = await buildOrchestrator({
    workflows: new Map([["flow", flow]]),
    auth: { instanceToken: INSTANCE_TOKEN },
    httpEdge,
    ...(store ? { store } : {}),
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  return `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
}
const portOf = (url: string) => Number(new URL(url).port);

async function startRun(base: string): Promise<{ runId: string; iid: string }> {
  const started = await fetch(`${base}/workflows/flow/runs`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ input: { task: "the report" } }),
  });
  const { runId } = (await started.json()) as { runId: string };
  const run = (await (await fetch(`${base}/runs/${runId}`, { headers: auth })).json()) as {
    turns: Array<{ iid: string }>;
  };
  return { runId, iid: run.turns[0]?.iid ?? "" };
}

describe("slow clients are cut (§6)", () => {
  it("20 half-sent requests and one silent connection are each answered 408 with a code and closed", async () => {
    const port = portOf(await listening());
    const halfSent = Array.from({ length: 20 }, () =>
      rawExchange(
        port,
        [`GET /runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${INSTANCE_TOKEN}\r\n`],
        8_000,
      ),
    );
    const silent = rawExchange(port, [], 8_000);
    for (const seen of await Promise.all(halfSent)) {
      expect(seen.closed).toBe(true);
      expect(seen.status).toBe(408);
      expect(seen.body).toMatchObject({ code: "JR2_ERR_REQUEST_TIMEOUT", requestTimeoutMs: 600 });
    }
    expect((await silent).closed).toBe(true);
  });

  it("a body sent slower than the request timeout is answered 408", async () => {
    const port = portOf(await listening());
    const seen = await rawExchange(
      port,
      [
        `POST /workflows/flow/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${INSTANCE_TOKEN}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 40\r\n\r\n{"input":',
      ],
      8_000,
    );
    expect(seen).toMatchObject({ closed: true, status: 408, body: { code: "JR2_ERR_REQUEST_TIMEOUT" } });
  });

  it("at the bound, the oldest connection that sent nothing is closed for a newcomer, whose request is answered (ADR-0285)", async () => {
    const base = await listening({
      ...LOW,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 10_000,
      maxConnections: 3,
    });
    const port = portOf(base);
    const held = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const s = connect(port, "127.0.0.1");
        await new Promise((resolve) => s.once("connect", resolve));
        return s;
      }),
    );
    await vi.waitFor(async () => {
      const count = await new Promise<number>((resolve) => app?.server.getConnections((_e, n) => resolve(n)));
      expect(count).toBeGreaterThan(0);
    });
    const probe = await fetch(`${base}/healthz`, { headers: { connection: "close" } });
    expect(probe.status).toBe(200);
    await vi.waitFor(() =>
      expect(held.filter((s) => s.destroyed || s.readableEnded).length).toBeGreaterThan(0),
    );
    for (const s of held) s.destroy();
  });

  it("the SSE run feed stays open past the request timeout and still delivers the run's end", async () => {
    const base = await listening();
    const { runId } = await startRun(base);
    const feed = await fetch(`${base}/runs/${runId}/events`, { headers: auth });
    expect(feed.status).toBe(200);
    const reader = feed.body!.getReader();
    let text = "";
    const readUntil = async (pattern: RegExp) => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    };
    await readUntil(/event: status/);
    // Over three request timeouts pass with the feed idle; then the run ends.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const cancelled = await fetch(`${base}/runs/${runId}/cancel`, { method: "POST", headers: auth });
    expect(cancelled.status).toBe(200);
    await readUntil(/"status":"cancelled"/);
    expect(text).toMatch(/event: status\ndata: \{[^\n]*"status":"cancelled"/);
  });

  it("a pick whose save takes longer than the request timeout is still answered", async () => {
    const memory = createMemoryStore();
    let slow = false;
    const store: RunStore = {
      ...memory,
      save: async (blob, picks) => {
        if (slow) await new Promise((resolve) => setTimeout(resolve, 1_500));
        return memory.save(blob, picks);
      },
    };
    const base = await listening(LOW, store);
    const { iid } = await startRun(base);
    slow = true;
    const pick = await fetch(`${base}${agentUrl(iid, "picks")}`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "note", arguments: {}, toolCallId: "slow-save" }),
    });
    expect(pick.status).toBe(200);
    expect(await pick.json()).toMatchObject({ delivered: true, moved: true });
  });
});

describe("the edges of the error contract answer a code (§7)", () => {
  it("headers over 16 KiB answer 431 JR2_ERR_REQUEST_HEADERS_TOO_LARGE", async () => {
    const port = portOf(await listening());
    const seen = await rawExchange(port, [
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(17_000)}\r\n\r\n`,
    ]);
    expect(seen.status).toBe(431);
    expect(seen.body).toMatchObject({ code: "JR2_ERR_REQUEST_HEADERS_TOO_LARGE", limit: 16384 });
  });

  it("a garbage request line answers 400 JR2_ERR_REQUEST_MALFORMED_HTTP", async () => {
    const port = portOf(await listening());
    const seen = await rawExchange(port, ["GARBAGE\r\n\r\n"]);
    expect(seen.status).toBe(400);
    expect(seen.body).toMatchObject({ code: "JR2_ERR_REQUEST_MALFORMED_HTTP" });
  });

  it("a chunked body of 16 MiB, sent in full before reading, gets its 413 (no reset)", async () => {
    const port = portOf(await listening({ ...LOW, headersTimeoutMs: 5_000, requestTimeoutMs: 20_000 }));
    const seen = await rawExchange(port, chunkedRequest("/workflows/flow/runs", auth, 16), 10_000);
    expect(seen.status).toBe(413);
    expect(seen.body).toMatchObject({ code: "JR2_ERR_REQUEST_TOO_LARGE", limit: 1024 * 1024 });
  });
});

describe("the limits are configurable (§6)", () => {
  it("reads each from env, defaults the rest, and refuses a bad value naming its variable", () => {
    expect(
      readHttpEdgeLimits(
        { JR2_HEADERS_TIMEOUT_MS: "2000", JR2_MAX_CONNECTIONS: "50" },
        ORCHESTRATOR_HTTP_EDGE_ENV,
      ),
    ).toEqual({
      headersTimeoutMs: 2000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 50,
    });
    expect(() => readHttpEdgeLimits({ JR2_REQUEST_TIMEOUT_MS: "0" }, ORCHESTRATOR_HTTP_EDGE_ENV)).toThrow(
      /JR2_REQUEST_TIMEOUT_MS `0`/,
    );
    expect(() => readHttpEdgeLimits({ JR2_MAX_CONNECTIONS: "many" }, ORCHESTRATOR_HTTP_EDGE_ENV)).toThrow(
      /JR2_MAX_CONNECTIONS `many`/,
    );
    expect(() => readHttpEdgeLimits({ JR2_HEADERS_TIMEOUT_MS: "40000" }, ORCHESTRATOR_HTTP_EDGE_ENV)).toThrow(
      /JR2_HEADERS_TIMEOUT_MS \(40000\) is longer than JR2_REQUEST_TIMEOUT_MS/,
    );
  });
});
