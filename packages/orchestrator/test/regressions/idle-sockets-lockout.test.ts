/**
 * Regression (issue 24 item 4, ADR-0285): a lock-out without a token. Root cause: both
 * services bounded connections with Node's `server.maxConnections`, which refuses the NEWEST
 * connection at the bound; 1,024 silent TCP connections (no byte sent, no token) held every slot
 * until the headers timeout (10 s) cut them, and every other client — the Harness's picks, the
 * CLI, the console, `/healthz` — was refused meanwhile, renewable at will.
 * Now (`@jr2/http-edge`'s connection guard): the oldest connection that sent no request is
 * closed to admit a newcomer, silent ones close after 2 s, and unproven connections leave a
 * reserve. Measured here: 2,000 idle sockets against each service, while a probe's requests
 * (`/healthz`, and on the Orchestrator an authenticated read) are answered.
 */
import { connect, type Socket } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { buildHarness } from "../../../harness/src/index.js";
import { buildOrchestrator } from "../../src/index.js";
import { flow, INSTANCE_TOKEN } from "../http/fixture.js";

const EDGE = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 1024,
};
const IDLE = 2_000;

let app: FastifyInstance | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await app?.close();
  app = undefined;
});

async function portOf(built: FastifyInstance): Promise<number> {
  app = built;
  await built.listen({ port: 0, host: "127.0.0.1" });
  const address = built.server.address();
  return typeof address === "object" && address ? address.port : 0;
}

/** Opens `n` connections that send nothing; resolves once each connected (or was refused). */
async function idleSockets(port: number, n: number): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, () => {
      const s = connect(port, "127.0.0.1");
      s.on("error", () => {});
      sockets.push(s);
      return new Promise((resolve) => {
        s.once("connect", resolve);
        s.once("close", resolve);
      });
    }),
  );
}

/** Each probe request, on a new connection, while the idle sockets keep coming. */
async function probeWhileFlooded(
  port: number,
  paths: Array<{ path: string; headers?: Record<string, string> }>,
) {
  const flood = idleSockets(port, IDLE);
  const answers: number[] = [];
  for (let i = 0; i < 5; i++)
    for (const { path, headers } of paths) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        headers: { connection: "close", ...headers },
        signal: AbortSignal.timeout(5_000),
      }).catch(() => undefined);
      answers.push(res?.status ?? 0);
    }
  await flood;
  // And after the whole flood connected: still answered.
  for (const { path, headers } of paths) {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      headers: { connection: "close", ...headers },
      signal: AbortSignal.timeout(5_000),
    }).catch(() => undefined);
    answers.push(res?.status ?? 0);
  }
  return answers;
}

describe("2,000 idle sockets against a probe (issue 24 item 4)", () => {
  it("the Orchestrator answers /healthz and an authenticated request throughout", async () => {
    const port = await portOf(
      await buildOrchestrator({
        workflows: new Map([["flow", flow]]),
        auth: { instanceToken: INSTANCE_TOKEN },
        httpEdge: EDGE,
      }),
    );
    const answers = await probeWhileFlooded(port, [
      { path: "/healthz" },
      { path: "/runs", headers: { authorization: `Bearer ${INSTANCE_TOKEN}` } },
    ]);
    expect(
      answers.every((s) => s === 200),
      JSON.stringify(answers),
    ).toBe(true);
  });

  it("the Harness answers /healthz throughout", async () => {
    const port = await portOf(
      buildHarness({
        models: { sim: { baseUrl: "http://127.0.0.1:9/v1", id: "sim", contextWindow: 1000, maxTokens: 100 } },
        orchestratorUrl: "http://127.0.0.1:9",
        harnessToken: "harness-idle-token-0123456789",
        sandboxToken: "",
        surfaceBudgetMs: 0,
        httpEdge: EDGE,
      }),
    );
    const answers = await probeWhileFlooded(port, [{ path: "/healthz" }]);
    expect(
      answers.every((s) => s === 200),
      JSON.stringify(answers),
    ).toBe(true);
  });
});
