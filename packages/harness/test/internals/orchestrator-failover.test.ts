/**
 * Issue 15 "Clients reach a survivor": the Harness's `JR2_ORCHESTRATOR_URL` is a list, A first.
 * A transport error or a 503 from A moves a surface read or a pick on to B; any other answer
 * from A (a 404, a 409) is the answer. Real sockets on 127.0.0.1, port 0.
 */
import { createServer, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createOrchestratorClient } from "../../src/orchestrator/orchestrator-client.js";
import { parseOrchestratorUrls } from "../../src/orchestrator/orchestrator-urls.js";
import { readHarnessEnv } from "../../src/wire/config.js";
import { type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";

const PICK = { name: "approve", arguments: { summary: "ok" }, toolCallId: "call-1" };
const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

/** A port on 127.0.0.1 nothing listens on (bound, then closed). */
async function closedPort(): Promise<string> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Instance A: answers every request with `status` (or never answers: `"silent"`); counts them. */
async function instanceA(status: number | "silent"): Promise<{ url: string; hits: number }> {
  const a = { url: "", hits: 0 };
  const server: Server = createServer((req, res) => {
    a.hits++;
    req.resume();
    if (status === "silent") return;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: `A says ${status}`, code: "JR2_ERR_TEST" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  open.push({
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  });
  a.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return a;
}

async function instanceB(): Promise<FakeOrchestrator> {
  const b = await startFakeOrchestrator();
  open.push(b);
  return b;
}

const clientOf = (url: string) =>
  createOrchestratorClient({
    url,
    token: "",
    fetch: globalThis.fetch.bind(globalThis),
    pickBudgetMs: 2_000,
    backoff: { initialMs: 20, maxMs: 50 },
    failoverAfterMs: 300,
    writeFailoverAfterMs: 1_200,
  });

describe("the Harness's Orchestrator list", () => {
  it("reaches B for the surface read and the pick when A is down", async () => {
    const b = await instanceB();
    const client = clientOf(`${await closedPort()},${b.url}`);
    const surface = await client.readSurface("coder/1", { budgetMs: 2_000 });
    expect(surface).toMatchObject({ kind: "surface", surface: { turnId: "t1" } });
    expect(await client.postPick("coder/1", PICK)).toMatchObject({ kind: "answer" });
    expect(b.picks).toEqual([PICK]);
  });

  it("reaches B when A answers 503 (stopping, or its lease lost)", async () => {
    const a = await instanceA(503);
    const b = await instanceB();
    const client = clientOf(`${a.url},${b.url}`);
    expect(await client.readSurfaceOnce("coder/1", 2_000)).toMatchObject({ kind: "surface" });
    expect(await client.postPick("coder/1", PICK)).toMatchObject({ kind: "answer" });
    expect(a.hits).toBeGreaterThanOrEqual(1);
    expect(b.surfaceReads).toBe(1);
    expect(b.picks).toHaveLength(1);
  });

  it("reads the surface from B when A accepts the connection but never answers (a paused host)", async () => {
    const a = await instanceA("silent");
    const b = await instanceB();
    const client = clientOf(`${a.url},${b.url}`);
    expect(await client.readSurface("coder/1", { budgetMs: 2_000 })).toMatchObject({ kind: "surface" });
    expect(a.hits).toBe(1);
    expect(b.surfaceReads).toBe(1);
  });

  it("waits for a pick's receipt from a slow A instead of sending it to B too", async () => {
    // A's save takes longer than failoverAfterMs (300 ms here): the pick is still A's to answer.
    let hits = 0;
    const server = createServer((req, res) => {
      hits++;
      req.resume();
      setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ delivered: true, moved: true, turnComplete: true, allowed: [] }));
      }, 700);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    open.push({ close: () => new Promise((r) => server.close(r)) });
    const slowA = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const b = await instanceB();
    expect(await clientOf(`${slowA},${b.url}`).postPick("coder/1", PICK)).toMatchObject({
      kind: "answer",
      answer: { delivered: true, turnComplete: true },
    });
    expect(hits).toBe(1);
    expect(b.picks).toHaveLength(0);
  });

  it("sends a pick on to B when A accepts it but never answers (a hung host), after the write wait", async () => {
    // Before: a write was waited for until undici's 300 s headersTimeout, holding the Turn.
    const a = await instanceA("silent");
    const b = await instanceB();
    const started = Date.now();
    expect(await clientOf(`${a.url},${b.url}`).postPick("coder/1", PICK)).toMatchObject({ kind: "answer" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_100);
    expect(a.hits).toBe(1);
    expect(b.picks).toEqual([PICK]);
  });

  it("takes A's 404 as the answer: the Turn is gone, B is not asked", async () => {
    const a = await instanceA(404);
    const b = await instanceB();
    const client = clientOf(`${a.url},${b.url}`);
    expect(await client.readSurface("coder/1", { budgetMs: 1_000 })).toEqual({ kind: "gone" });
    expect(await client.postPick("coder/1", PICK)).toEqual({ kind: "gone" });
    expect(b.surfaceReads).toBe(0);
    expect(b.picks).toHaveLength(0);
  });

  it("takes A's 409 as the answer: the pick fails without reaching B", async () => {
    const a = await instanceA(409);
    const b = await instanceB();
    const client = clientOf(`${a.url},${b.url}`);
    expect(await client.postPick("coder/1", PICK)).toMatchObject({
      kind: "failed",
      message: "picks answered 409",
    });
    expect(a.hits).toBe(1);
    expect(b.picks).toHaveLength(0);
  });

  it("says what every URL answered when none could be reached", async () => {
    const [x, y] = [await closedPort(), await closedPort()];
    const result = await clientOf(`${x},${y}`).readSurfaceOnce("coder/1", 2_000);
    expect(result.kind).toBe("failed");
    expect(result.kind === "failed" && result.message).toContain(x);
    expect(result.kind === "failed" && result.message).toContain(y);
  });
});

describe("JR2_ORCHESTRATOR_URL at start-up", () => {
  const env = { JR2_HARNESS_TOKEN: "harness-token-0123456789abcdef" };

  it("accepts a comma-separated list and keeps its order", () => {
    const config = readHarnessEnv({ ...env, JR2_ORCHESTRATOR_URL: " http://a:7400/ , https://b:7400" });
    expect(config.orchestratorUrl).toBe("http://a:7400,https://b:7400");
    expect(readHarnessEnv(env).orchestratorUrl).toBe("http://127.0.0.1:7400");
  });

  it.each([
    ["http://a:7400,b:7400", "entry 2 `b:7400`"],
    ["http://a:7400,,http://b:7400", "entry 2 `` is empty"],
    ["http://a:7400,not a url", "entry 2 `not a url` is not a URL"],
    ["http://a:7400?x=1", "entry 1 `http://a:7400?x=1` carries a query"],
    [" , ", "JR2_ORCHESTRATOR_URL is empty"],
    ["http://a:7400,http://me:pw@b:7400", "entry 2 `http://***@b:7400` carries a user or password"],
  ])("refuses %j naming the bad entry", (raw, named) => {
    expect(() => readHarnessEnv({ ...env, JR2_ORCHESTRATOR_URL: raw })).toThrow(named);
    expect(() => parseOrchestratorUrls(raw)).toThrow("JR2_ORCHESTRATOR_URL");
  });
});
