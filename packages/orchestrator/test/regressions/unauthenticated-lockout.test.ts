/**
 * Regression (adversary M1 against the connection guard, ADR-0287): unauthenticated clients
 * locked authenticated ones out. Root cause: a socket counted as proven once any request's
 * headers were parsed — one answered 401 included — and proven sockets were never evicted; a
 * slow POST body held its slot until the 30 s request timeout. Now a socket is proven only by
 * an authenticated request (or an answer below 400), a 4xx on an unproven socket closes it
 * (`Connection: close`), idle keep-alive sockets are evictable oldest first at the bound, and an
 * unproven request must have fully arrived within 5 s. Both services share the guard: each is
 * driven here with a bound of 16 connections filled by one unauthenticated address.
 */
import { connect, type Socket } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { buildHarness } from "../../../harness/src/index.js";
import { buildOrchestrator } from "../../src/index.js";
import { flow, INSTANCE_TOKEN } from "../http/fixture.js";

const BOUND = 16;
const EDGE = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: BOUND,
};
const HARNESS_TOKEN = "harness-edge-token-0123456789";

let app: FastifyInstance | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await app?.close();
  app = undefined;
});

const services = {
  Orchestrator: {
    build: async () =>
      buildOrchestrator({
        workflows: new Map([["flow", flow]]),
        auth: { instanceToken: INSTANCE_TOKEN },
        httpEdge: EDGE,
      }),
    authed: { path: "/runs", token: INSTANCE_TOKEN },
    refused: "GET /runs HTTP/1.1\r\nHost: a\r\n\r\n",
  },
  Harness: {
    build: async () =>
      buildHarness({
        models: { sim: { baseUrl: "http://127.0.0.1:9/v1", id: "sim", contextWindow: 1000, maxTokens: 100 } },
        orchestratorUrl: "http://127.0.0.1:9",
        harnessToken: HARNESS_TOKEN,
        sandboxToken: "",
        surfaceBudgetMs: 0,
        httpEdge: EDGE,
      }) as unknown as FastifyInstance,
    authed: { path: "/models", token: HARNESS_TOKEN },
    refused: "GET /conversations/x/stream?offset=0 HTTP/1.1\r\nHost: a\r\n\r\n",
  },
};

async function listening(service: keyof typeof services): Promise<number> {
  app = await services[service].build();
  await app.listen({ port: 0, host: "127.0.0.1" });
  const a = app.server.address();
  return typeof a === "object" && a ? a.port : 0;
}

/** A raw socket that writes `first`; its answer text and whether the server closed it. */
function open(port: number, first: string) {
  const state = { answer: "", closed: false };
  const s = connect(port, "127.0.0.1", () => s.write(first));
  s.on("error", () => {});
  s.on("data", (d) => {
    state.answer += d.toString();
  });
  s.on("close", () => {
    state.closed = true;
  });
  sockets.push(s);
  return new Promise<typeof state>((resolve) => s.once("connect", () => resolve(state)));
}

async function authenticated(port: number, service: keyof typeof services): Promise<number | string> {
  const { path, token } = services[service].authed;
  try {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, {
      headers: { authorization: `Bearer ${token}`, connection: "close" },
      signal: AbortSignal.timeout(3000),
    });
    return r.status;
  } catch (e) {
    return `refused (${String((e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name)})`;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(["Orchestrator", "Harness"] as const)(
  "%s: unauthenticated sockets cannot lock the bound",
  (service) => {
    it("a 401 answers Connection: close and closes; an authenticated client is served after 16 of them", async () => {
      const port = await listening(service);
      const states = [];
      for (let i = 0; i < BOUND; i++) states.push(await open(port, services[service].refused));
      await sleep(2_500); // past SILENT_MS
      expect(
        states.every((s) => /^HTTP\/1\.1 401/.test(s.answer)),
        states[0]?.answer,
      ).toBe(true);
      expect(states.every((s) => /\r\nconnection: close\r\n/i.test(s.answer))).toBe(true);
      expect(states.every((s) => s.closed)).toBe(true);
      expect(await authenticated(port, service)).toBe(200);
    }, 20_000);

    it("idle keep-alive sockets proven by /healthz (200) are capped per address and evictable", async () => {
      const port = await listening(service);
      const states = [];
      for (let i = 0; i < BOUND; i++)
        states.push(await open(port, "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"));
      await sleep(2_500);
      expect(states.filter((s) => /^HTTP\/1\.1 200/.test(s.answer)).length).toBeGreaterThanOrEqual(BOUND / 2);
      // The per-address cap counts idle proven sockets too: one address keeps at most half the bound.
      expect(states.filter((s) => !s.closed).length).toBeLessThanOrEqual(BOUND / 2);
      expect(await authenticated(port, service)).toBe(200);
    }, 20_000);

    it("a trickled body is cut after 5 s, not the 30 s request timeout, and holds no one out", async () => {
      const port = await listening(service);
      const states = [];
      for (let i = 0; i < BOUND; i++)
        states.push(
          await open(
            port,
            "POST /nowhere HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{",
          ),
        );
      await sleep(2_500);
      expect(await authenticated(port, service)).toBe(200);
      await sleep(4_000);
      expect(states.every((s) => s.closed)).toBe(true);
    }, 20_000);
  },
);
