/**
 * Regression (issue 24 item 3): a token sent to whatever URL a lease row names.
 * Root cause: the forwarding hook sent a request for a run leased elsewhere to the row's
 * `owner_url` verbatim, with the caller's `Authorization: Bearer <instance token>`, and relayed
 * the answer as the run's: one database write (`UPDATE run_leases SET owner_url = …`) was full
 * trust. Now (ADR-0281) an instance forwards only to a known peer (`JR2_PEERS`, or a URL that
 * proved it holds `JR2_PEER_KEY` on `/healthz`), with a peer credential instead of the bearer,
 * and the owner writes its own URL again on every renewal.
 * Real PostgreSQL, two Orchestrators, a catcher on loopback. Skipped without JR2_TEST_PG_URL.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openPostgresStore, type PostgresRunStore } from "../../src/durability/store/postgres.js";
import { buildOrchestrator } from "../../src/index.js";
import { flow, INSTANCE_TOKEN, PEER_KEY, SANDBOX_KEY } from "../http/fixture.js";
import { describePg, freshPgDatabase } from "../pg.js";

interface Instance {
  app: FastifyInstance;
  url: string;
  store: PostgresRunStore;
}

/** One instance listening on a port the kernel picks, advertising that URL; a long lease (no renewal during the test unless asked). */
async function instance(dbUrl: string, id: string): Promise<Instance> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  const url = `http://127.0.0.1:${port}`;
  const store = await openPostgresStore(dbUrl, { instanceId: id, advertiseUrl: url, leaseMs: 60_000 });
  const app = await buildOrchestrator({
    workflows: new Map([["flow", flow]]),
    auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY, peerKey: PEER_KEY },
    store,
  });
  await app.listen({ host: "127.0.0.1", port });
  return { app, url, store };
}

/** A catcher: answers 200 to everything, like a jr2 /healthz (boot id, a made-up proof), and keeps what it was sent. */
async function catcher(): Promise<{
  server: Server;
  url: string;
  got: Array<{ url: string; headers: IncomingHttpHeaders }>;
}> {
  const got: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
  const server = createServer((req, res) => {
    got.push({ url: req.url ?? "", headers: req.headers });
    res.writeHead(200, {
      "content-type": "application/json",
      "x-jr2-boot": randomUUID(),
      "x-jr2-peer-proof": "0".repeat(64),
    });
    res.end(JSON.stringify({ ok: true, runId: "caught", status: "succeeded" }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got };
}

async function get(base: string, path: string) {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${INSTANCE_TOKEN}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describePg("a lease row's owner_url rewritten to a catcher (issue 24 item 3)", () => {
  let db: Awaited<ReturnType<typeof freshPgDatabase>>;
  let a: Instance;
  let b: Instance;
  let trap: Awaited<ReturnType<typeof catcher>>;
  beforeAll(async () => {
    db = await freshPgDatabase("jr2_catcher");
    a = await instance(db.url, "a");
    b = await instance(db.url, "b");
    trap = await catcher();
  }, 60_000);
  afterAll(async () => {
    await a?.app.close();
    await b?.app.close();
    trap?.server.close();
    await db?.drop();
  });

  it("the catcher receives no token and no forwarded request; the owner's next renewal writes its own URL back", async () => {
    const started = await fetch(`${b.url}/workflows/flow/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${INSTANCE_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ input: { task: "t" } }),
    });
    const runId = ((await started.json()) as { runId: string }).runId;
    expect((await get(a.url, `/runs/${runId}`)).status).toBe(200); // forwarded to B, a known peer

    const sql = new pg.Client(db.url);
    await sql.connect();
    try {
      await sql.query("UPDATE run_leases SET owner_url = $1 WHERE run_id = $2", [trap.url, runId]);
    } finally {
      await sql.end();
    }
    for (const path of [`/runs/${runId}`, `/runs/${runId}/turns`]) {
      const via = await get(a.url, path);
      expect(via.status).toBe(503);
      expect(via.body).toMatchObject({ code: "JR2_ERR_PEER_UNKNOWN", runId, owner: "b", url: trap.url });
    }
    // At most the peer challenge reached the catcher: no token, no request of the run.
    expect(trap.got.map((g) => g.url)).toEqual(["/healthz"]);
    for (const g of trap.got) {
      expect(g.headers.authorization).toBeUndefined();
      expect(g.headers["x-jr2-peer"]).toBeUndefined();
    }
    expect(JSON.stringify(trap.got)).not.toContain(INSTANCE_TOKEN);

    // The owner's renewal rewrites the row to its own URL: A forwards to B again.
    expect((await b.store.ownership.renew()).lost).toEqual([]);
    expect((await b.store.ownership.holder(runId))?.url).toBe(b.url);
    const back = await get(a.url, `/runs/${runId}`);
    expect([back.status, back.body.runId, back.body.status]).toEqual([200, runId, "running"]);
    expect(trap.got).toHaveLength(1);
  });
});
