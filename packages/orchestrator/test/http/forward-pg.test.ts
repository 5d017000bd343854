/**
 * Every instance answers the whole API — on the real PostgreSQL store (issue 15, ADR-0280): two
 * Orchestrator apps on one database, each listening on 127.0.0.1 at the URL it advertises in
 * its lease rows. The run's first save claims it for its owner; the other instance forwards
 * requests naming it (the lease row says where) and follows its feed from the store, woken by
 * `LISTEN/NOTIFY`. Skipped without JR2_TEST_PG_URL (never under CI=true).
 */
import { createServer } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openPostgresStore, type PostgresRunStore } from "../../src/durability/store/postgres.js";
import { buildOrchestrator } from "../../src/index.js";
import { describePg, freshPgDatabase } from "../pg.js";
import { agentUrl, flow, INSTANCE_TOKEN, PEER_KEY, SANDBOX_KEY } from "./fixture.js";

/** A port the kernel hands out (listen on 0, then close): the URL is advertised before listening. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

interface Instance {
  app: FastifyInstance;
  url: string;
  store: PostgresRunStore;
  seen: Array<Record<string, unknown>>;
}

/** One instance on the database at `dbUrl`, listening where it advertises. */
async function instance(dbUrl: string, id: string): Promise<Instance> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const store = await openPostgresStore(dbUrl, { instanceId: id, advertiseUrl: url, leaseMs: 1500 });
  const app = await buildOrchestrator({
    workflows: new Map([["flow", flow]]),
    auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY, peerKey: PEER_KEY },
    store,
  });
  const seen: Array<Record<string, unknown>> = [];
  app.addHook("onResponse", async (request) => {
    seen.push({ url: request.url, ...request.headers });
  });
  await app.listen({ host: "127.0.0.1", port });
  return { app, url, store, seen };
}

async function send(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${INSTANCE_TOKEN}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
  const json = res.headers.get("content-type")?.includes("json") && text;
  return {
    status: res.status,
    text,
    body: (json ? JSON.parse(text) : undefined) as any,
    headers: res.headers,
  };
}

describePg("two instances on one PostgreSQL store (ADR-0280)", () => {
  let db: Awaited<ReturnType<typeof freshPgDatabase>>;
  let a: Instance;
  let b: Instance;
  beforeAll(async () => {
    db = await freshPgDatabase("jr2_forward");
    // Both up before any run starts: the run is B's, claimed by its first save.
    a = await instance(db.url, "a");
    b = await instance(db.url, "b");
  }, 60_000);
  afterAll(async () => {
    await a?.app.close();
    await b?.app.close();
    await db?.drop();
  });

  it("forwards a run B holds from A with the owner's bytes, and A's feed follows it from the store to its end", async () => {
    const started = await send(b.url, "POST", "/workflows/flow/runs", { input: { task: "t" } });
    const runId = started.body.runId as string;
    expect((await b.store.ownership.holder(runId))?.instanceId).toBe("b");
    const direct = await send(b.url, "GET", `/runs/${runId}`);
    const via = await send(a.url, "GET", `/runs/${runId}`);
    expect(via.status).toBe(200);
    expect(via.text).toBe(direct.text);
    expect(b.seen.filter((h) => h["x-jr2-forwarded-by"] === "a")).toHaveLength(1);

    // A's stream of B's run: opened now, fed by NOTIFY as B commits.
    const streamed = fetch(`${a.url}/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${INSTANCE_TOKEN}` },
    }).then((res) => res.text());
    const iid = direct.body.turns[0].iid as string;
    const picked = await send(a.url, "POST", agentUrl(iid, "picks"), {
      name: "note",
      arguments: {},
      toolCallId: "n1",
    });
    expect(picked.body).toMatchObject({ delivered: true, moved: true });
    expect((await send(a.url, "POST", `/runs/${runId}/cancel`)).body).toEqual({ runId, status: "cancelled" });
    const body = await streamed;
    expect(body).toContain("event: pick");
    expect(body.trimEnd().split("\n\n").at(-1)).toContain('"status":"cancelled"');
    // Settled: no lease any more, answered from the store on either instance.
    expect(await b.store.ownership.holder(runId)).toBeUndefined();
    expect((await send(a.url, "GET", `/runs/${runId}`)).body.status).toBe("cancelled");
    // The feed A served is the owner's, byte for byte.
    expect(body).toBe((await send(b.url, "GET", `/runs/${runId}/events`)).text);
  });

  it("when the owner dies: 503 JR2_ERR_RUN_MOVING with Retry-After (never a 5xx or a 404) until A adopts the run; A's feed goes on", async () => {
    const c = await instance(db.url, "c");
    const started = await send(c.url, "POST", "/workflows/flow/runs", { input: { task: "t" } });
    const runId = started.body.runId as string;
    const iid = (await send(c.url, "GET", `/runs/${runId}`)).body.turns[0].iid as string;
    await send(c.url, "POST", agentUrl(iid, "picks"), {
      name: "note",
      arguments: {},
      toolCallId: "before",
    });
    const streamed = fetch(`${a.url}/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${INSTANCE_TOKEN}` },
    }).then((res) => res.text());
    // C stops as at a crash: no save, no release; its lease runs out.
    await c.app.close();
    const answers: Array<{ status: number; code?: string; retryAfter: string | null }> = [];
    for (let i = 0; i < 100; i++) {
      const res = await send(a.url, "GET", `/runs/${runId}`);
      answers.push({
        status: res.status,
        code: res.body?.code,
        retryAfter: res.headers.get("retry-after"),
      });
      if (res.status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(answers.at(-1)?.status).toBe(200);
    expect(answers.length).toBeGreaterThan(1); // C down, its lease still current: refused, not 5xx
    for (const refused of answers.slice(0, -1))
      expect(refused).toEqual({
        status: 503,
        code: "JR2_ERR_RUN_MOVING",
        retryAfter: expect.stringMatching(/^\d+$/),
      });
    // A or B adopted it (whichever came first); the other forwards to it.
    expect(["a", "b"]).toContain((await a.store.ownership.holder(runId))?.instanceId);
    const picked = await send(a.url, "POST", agentUrl(iid, "picks"), {
      name: "note",
      arguments: {},
      toolCallId: "after",
    });
    expect(picked.body).toMatchObject({ delivered: true });
    await send(b.url, "POST", `/runs/${runId}/cancel`);
    const ids = (await streamed)
      .split("\n\n")
      .filter((m) => m.startsWith("id: "))
      .map((m) => Number(m.slice(4, m.indexOf("\n"))));
    expect(ids).toEqual([...ids.keys()]);
    expect(await streamed).toContain('"status":"cancelled"');
  });
});
