/**
 * Regression (issue 16 §6, §7 — the Harness's HTTP edge).
 * Root causes: Fastify's `requestTimeout: 0` left Node's header deadline unchecked for 30 s
 * intervals and no request deadline at all, and nothing bounded connections, so half-sent
 * requests held sockets for as long as the client liked; Node's parser errors (a garbage
 * request line, headers over 16 KiB) went through Fastify's default `clientErrorHandler`,
 * which answers without `code`; a body refused at the limit closed the socket with the rest
 * of the body unread, so a client still sending got a TCP reset instead of the 413; the
 * bearer check compared lengths before `timingSafeEqual` and read `Bearer` alone as invalid.
 * Fixed in @jr2/http-edge, routes/errors.ts, routes/auth.ts.
 * The long-poll case proves the timeouts time only a request's arrival: a stream read that
 * waits longer than the request timeout still answers.
 */
import * as crypto from "node:crypto";
import { connect } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it, vi } from "vitest";

vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

import { buildHarness } from "../../src/index.js";
import { chunkedRequest, rawExchange } from "../fixtures/raw-http.js";

const TOKEN = "harness-edge-token-0123456789";
const auth = { authorization: `Bearer ${TOKEN}` };
/** Lowered so the slow-client cases finish in a few seconds (issue 16 "Timeouts"). */
const LOW = { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 300, maxConnections: 64 };

let app: (FastifyInstance & { conversations: { idle(): Promise<void> } }) | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function listening(httpEdge = LOW): Promise<number> {
  app = buildHarness({
    models: { sim: { baseUrl: "http://127.0.0.1:9/v1", id: "sim", contextWindow: 1000, maxTokens: 100 } },
    orchestratorUrl: "http://127.0.0.1:9",
    harnessToken: TOKEN,
    sandboxToken: "",
    surfaceBudgetMs: 0,
    httpEdge,
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  return typeof address === "object" && address ? address.port : 0;
}

describe("slow clients are cut (§6)", () => {
  it("20 half-sent requests and one silent connection are each answered 408 with a code and closed", async () => {
    const port = await listening();
    const halfSent = Array.from({ length: 20 }, () =>
      rawExchange(port, ["GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "], 8_000),
    );
    const silent = rawExchange(port, [], 8_000);
    for (const seen of await Promise.all(halfSent)) {
      expect(seen.closed).toBe(true);
      expect(seen.status).toBe(408);
      expect(seen.body).toMatchObject({ code: "JR2_ERR_REQUEST_TIMEOUT", headersTimeoutMs: 300 });
    }
    expect((await silent).closed).toBe(true);
  });

  it("at the bound, the oldest connection that sent nothing is closed for a newcomer, whose request is answered (ADR-0285)", async () => {
    const port = await listening({
      ...LOW,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 10_000,
      maxConnections: 3,
    });
    const held = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const s = connect(port, "127.0.0.1");
        await new Promise((resolve) => s.once("connect", resolve));
        return s;
      }),
    );
    // The server counts a connection once it accepts it: wait until it holds all three.
    await vi.waitFor(async () => {
      const count = await new Promise<number>((resolve) => app?.server.getConnections((_e, n) => resolve(n)));
      expect(count).toBeGreaterThan(0);
    });
    const probe = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { connection: "close" } });
    expect(probe.status).toBe(200);
    await vi.waitFor(() =>
      expect(held.filter((s) => s.destroyed || s.readableEnded).length).toBeGreaterThan(0),
    );
    for (const s of held) s.destroy();
  });

  it("a stream long-poll that waits past the request timeout still answers (204)", async () => {
    const port = await listening();
    const url = `http://127.0.0.1:${port}/conversations/c1`;
    const admitted = await fetch(`${url}/submissions`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        agent: "coder",
        kind: "task",
        definition: { model: "sim", instructions: "i", workspace: "none" },
        prompt: "Review the change.",
      }),
    });
    expect(admitted.status).toBe(200);
    await app?.conversations.idle();
    // Read to the end, then wait 2 s (over three request timeouts) for what comes next.
    let offset = "0";
    for (;;) {
      const page = await fetch(`${url}/stream?offset=${offset}`, { headers: auth });
      if (page.status === 204) break;
      offset = ((await page.json()) as { nextOffset: string }).nextOffset;
    }
    const waited = await fetch(`${url}/stream?offset=${offset}&wait=2`, { headers: auth });
    expect(waited.status).toBe(204);
  });
});

describe("the edges of the error contract answer a code (§7)", () => {
  it("headers over 16 KiB answer 431 JR2_ERR_REQUEST_HEADERS_TOO_LARGE", async () => {
    const port = await listening();
    const seen = await rawExchange(port, [
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(17_000)}\r\n\r\n`,
    ]);
    expect(seen.status).toBe(431);
    expect(seen.body).toMatchObject({ code: "JR2_ERR_REQUEST_HEADERS_TOO_LARGE", limit: 16384 });
  });

  it("a garbage request line answers 400 JR2_ERR_REQUEST_MALFORMED_HTTP", async () => {
    const port = await listening();
    const seen = await rawExchange(port, ["GARBAGE\r\n\r\n"]);
    expect(seen.status).toBe(400);
    expect(seen.body).toMatchObject({ code: "JR2_ERR_REQUEST_MALFORMED_HTTP" });
  });

  it("a chunked body of 16 MiB, sent in full before reading, gets its 413 (no reset)", async () => {
    const port = await listening({ ...LOW, headersTimeoutMs: 5_000, requestTimeoutMs: 20_000 });
    const seen = await rawExchange(port, chunkedRequest("/conversations/c1/submissions", auth, 16), 10_000);
    expect(seen.status).toBe(413);
    expect(seen.body).toMatchObject({ code: "JR2_ERR_REQUEST_TOO_LARGE" });
  });

  it("`Bearer` alone answers AUTH_MISSING, as the Orchestrator does; `Bearer a b` AUTH_INVALID", async () => {
    const port = await listening();
    const url = `http://127.0.0.1:${port}/conversations/c1/history`;
    const bare = await fetch(url, { headers: { authorization: "Bearer" } });
    expect(bare.status).toBe(401);
    expect(await bare.json()).toMatchObject({ code: "JR2_ERR_AUTH_MISSING" });
    const two = await fetch(url, { headers: { authorization: `Bearer ${TOKEN} extra` } });
    expect(await two.json()).toMatchObject({ code: "JR2_ERR_AUTH_INVALID" });
  });

  it("a token of another length is still compared in constant time (equal-length digests)", async () => {
    const port = await listening();
    const compare = vi.mocked(crypto.timingSafeEqual);
    compare.mockClear();
    const res = await fetch(`http://127.0.0.1:${port}/conversations/c1/history`, {
      headers: { authorization: "Bearer short" },
    });
    expect(await res.json()).toMatchObject({ code: "JR2_ERR_AUTH_INVALID" });
    expect(compare).toHaveBeenCalled();
    const [a, b] = compare.mock.calls[0] as [Buffer, Buffer];
    expect([a.length, b.length]).toEqual([32, 32]);
  });
});
