/**
 * Every instance answers the whole API (issue 15 item 2, ADR-0280): two Orchestrator apps in one
 * process, listening on 127.0.0.1; the follower's leases are a fake whose holder the test sets.
 * A request for a run the other instance holds is forwarded with a peer credential (never the
 * caller's bearer, ADR-0281) and answered with the owner's bytes; an expired holder, an unreachable owner and a forwarded
 * request for a run not hosted answer 503 `JR2_ERR_RUN_MOVING` with `Retry-After`.
 */
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { buildOrchestrator } from "../../src/index.js";
import { mintSandboxToken } from "../../src/turns/access.js";
import { fakeOwnership, leaseOf, listenLocal, sharedMemoryStore } from "./fake-ownership.js";
import { agentUrl, flow, INSTANCE_TOKEN, PEER_KEY, SANDBOX_KEY } from "./fixture.js";

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0).reverse()) await app.close();
});

/** An app serving `flow` over `store`, with `peerKey` (default the test's; null: none). */
async function instance(
  store: ReturnType<typeof sharedMemoryStore>,
  peerKey: string | null = PEER_KEY,
  logLines?: string[],
): Promise<{ app: FastifyInstance; url: string; seen: Array<Record<string, unknown>> }> {
  const app = await buildOrchestrator({
    workflows: new Map([["flow", flow]]),
    auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY, ...(peerKey ? { peerKey } : {}) },
    store,
    ...(logLines ? { logger: pino({ level: "debug" }, linesInto(logLines)) } : {}),
  });
  // What reached this instance, headers as they came (read by the owner's assertions); on
  // response, so a request refused by the auth hook is counted too.
  const seen: Array<Record<string, unknown>> = [];
  app.addHook("onResponse", async (request) => {
    seen.push({ url: request.url, ...request.headers });
  });
  apps.push(app);
  return { app, url: await listenLocal(app), seen };
}

/** The URL of an owner that just went away (port 0, then closed): connections are refused. */
async function closedUrl(): Promise<string> {
  const gone = await instance(sharedMemoryStore());
  apps.splice(apps.indexOf(gone.app), 1);
  await gone.app.close();
  return gone.url;
}

/** A stream collecting pino's lines. */
function linesInto(lines: string[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
}

/** The owner B (its runs live in memory) and a follower A whose leases say B holds `runId`. */
async function ownerAndFollower(followerKey: string | null = PEER_KEY, logLines?: string[]) {
  const store = sharedMemoryStore();
  const owner = await instance(store);
  const started = await fetchJson(owner.url, "POST", "/workflows/flow/runs", { input: { task: "t" } });
  const runId = started.body.runId as string;
  const run = await fetchJson(owner.url, "GET", `/runs/${runId}`);
  const iid = run.body.turns[0].iid as string;
  const ownership = fakeOwnership("a");
  ownership.holders.set(runId, leaseOf(runId, "b", owner.url));
  const follower = await instance(Object.assign(sharedMemoryStore(), { ownership }), followerKey, logLines);
  return { owner, follower, ownership, runId, iid };
}

async function fetchJson(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = { authorization: `Bearer ${INSTANCE_TOKEN}` },
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
): Promise<{ status: number; text: string; body: any; headers: Headers }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

describe("forwarding to the run's owner (ADR-0280)", () => {
  it("answers a run held by another instance with the owner's bytes: GET, a pick with its body, the surface", async () => {
    const { owner, follower, runId, iid } = await ownerAndFollower();
    const direct = await fetchJson(owner.url, "GET", `/runs/${runId}`);
    const via = await fetchJson(follower.url, "GET", `/runs/${runId}`);
    expect(via.status).toBe(200);
    expect(via.text).toBe(direct.text);

    const picked = await fetchJson(follower.url, "POST", agentUrl(iid, "picks"), {
      name: "note",
      arguments: {},
      toolCallId: "c1",
    });
    expect(picked.body).toEqual({
      delivered: true,
      moved: true,
      turnComplete: false,
      allowed: ["check", "escalate", "finish", "note"],
    });
    // The owner's Machine moved: its context counts the note.
    expect((await fetchJson(owner.url, "GET", `/runs/${runId}`)).body.context.notes).toBe(1);
    const surface = await fetchJson(follower.url, "GET", agentUrl(iid, "surface"));
    expect(surface.text).toBe((await fetchJson(owner.url, "GET", agentUrl(iid, "surface"))).text);
    // The owner saw each forwarded request marked with the follower's id, the query kept.
    await fetchJson(follower.url, "GET", `/runs/${runId}/turns?x=1`);
    const forwarded = owner.seen.filter((h) => h["x-jr2-forwarded-by"] === "a");
    expect(forwarded.map((h) => h.url)).toEqual([
      `/runs/${runId}`,
      `/agents/${encodeURIComponent(iid)}/picks`,
      `/agents/${encodeURIComponent(iid)}/surface`,
      `/runs/${runId}/turns?x=1`,
    ]);
  });

  it("forwards a peer credential vouching for the caller, never its bearer: a sandbox token reaches the owner as that sandbox", async () => {
    const { owner, follower, iid } = await ownerAndFollower();
    const sandboxToken = mintSandboxToken(SANDBOX_KEY, "ws-elsewhere");
    const res = await fetchJson(follower.url, "GET", agentUrl(iid, "surface"), undefined, {
      authorization: `Bearer ${sandboxToken}`,
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    });
    // The owner authorized the caller the peer vouched for: that sandbox's scope does not reach an instance-scope Turn.
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("JR2_ERR_TURN_NOT_FOUND");
    const atOwner = owner.seen.filter((h) => h["x-jr2-forwarded-by"] === "a");
    expect(atOwner).toHaveLength(1);
    expect(atOwner[0]?.authorization).toBeUndefined();
    expect(atOwner[0]?.["x-jr2-peer"]).toMatch(/^\d+\.sandbox%3Aws-elsewhere\.[0-9a-f]{64}$/);
    expect(atOwner[0]?.traceparent).toBe("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    expect(JSON.stringify(atOwner)).not.toContain(INSTANCE_TOKEN);
    expect(JSON.stringify(atOwner)).not.toContain(sandboxToken);
  });

  it("a follower with another JR2_PEER_KEY is not a known peer: 503 JR2_ERR_PEER_UNKNOWN, and nothing of the request reaches the owner", async () => {
    const { owner, follower, runId } = await ownerAndFollower("another-peer-key-0123456789abcdef");
    const res = await fetchJson(follower.url, "POST", `/runs/${runId}/cancel`);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: "JR2_ERR_PEER_UNKNOWN", runId, owner: "b", url: owner.url });
    expect(res.body.error).toContain("JR2_PEER_KEY");
    expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    // Only the challenge reached the owner, with no token; the run is still running.
    expect(owner.seen.map((h) => h.url)).toEqual(["/workflows/flow/runs", `/runs/${runId}`, "/healthz"]);
    expect(owner.seen.at(-1)?.authorization).toBeUndefined();
    expect((await fetchJson(owner.url, "GET", `/runs/${runId}`)).body.status).toBe("running");
  });

  it("skew: a request forwarded the old way (the caller's bearer, no peer credential) is refused 401 JR2_ERR_PEER_CREDENTIAL naming JR2_PEER_KEY", async () => {
    const { owner, runId } = await ownerAndFollower();
    const res = await fetchJson(owner.url, "POST", `/runs/${runId}/cancel`, undefined, {
      authorization: `Bearer ${INSTANCE_TOKEN}`,
      "x-jr2-forwarded-by": "old-peer",
    });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: "JR2_ERR_PEER_CREDENTIAL", from: "old-peer" });
    expect(res.body.error).toContain("JR2_PEER_KEY");
    expect((await fetchJson(owner.url, "GET", `/runs/${runId}`)).body.status).toBe("running");
  });

  it("refuses a bad token itself before any lease is read (401 before any lookup)", async () => {
    const { follower, ownership, runId } = await ownerAndFollower();
    const res = await fetchJson(follower.url, "GET", `/runs/${runId}`, undefined, {
      authorization: "Bearer nope",
    });
    expect(res.status).toBe(401);
    expect(ownership.asked).toBe(0);
  });

  it("an expired holder answers 503 JR2_ERR_RUN_MOVING with Retry-After until a survivor adopts the run", async () => {
    const { owner, follower, ownership, runId, iid } = await ownerAndFollower();
    ownership.holders.set(runId, leaseOf(runId, "b", owner.url, -500));
    for (const [method, path, body] of [
      ["GET", `/runs/${runId}`, undefined],
      ["POST", agentUrl(iid, "picks"), { name: "note", arguments: {}, toolCallId: "x" }],
    ] as const) {
      const res = await fetchJson(follower.url, method, path, body);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: "JR2_ERR_RUN_MOVING", runId, owner: "b", retryAfter: 1 });
      expect(res.body.error).toContain("`b` stopped renewing its lease");
      expect(res.headers.get("retry-after")).toBe("1");
    }
    expect(owner.seen.filter((h) => h["x-jr2-forwarded-by"])).toHaveLength(0);
  });

  it("an owner that cannot be reached answers 503 with Retry-After, not a 5xx stack", async () => {
    const { follower, ownership, runId, iid } = await ownerAndFollower();
    ownership.holders.set(runId, leaseOf(runId, "b", await closedUrl(), 3000));
    const res = await fetchJson(follower.url, "POST", agentUrl(iid, "picks"), {
      name: "note",
      arguments: {},
      toolCallId: "y",
    });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("JR2_ERR_RUN_MOVING");
    expect(res.body.error).toContain("cannot be reached");
    // The rest of its lease (≈3 s) and an adoption round.
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(3);
    expect(res.body.retryAfter).toBe(Number(res.headers.get("retry-after")));
  });

  it("never forwards a forwarded request again: two instances each naming the other answer 503 once", async () => {
    const a = fakeOwnership("a");
    const b = fakeOwnership("b");
    const instA = await instance(Object.assign(sharedMemoryStore(), { ownership: a }));
    const instB = await instance(Object.assign(sharedMemoryStore(), { ownership: b }));
    a.holders.set("run-ghost", leaseOf("run-ghost", "b", instB.url));
    b.holders.set("run-ghost", leaseOf("run-ghost", "a", instA.url));
    const res = await fetchJson(instA.url, "GET", "/runs/run-ghost");
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("JR2_ERR_RUN_MOVING");
    expect(res.body.error).toContain("never forwarded again");
    expect(res.headers.get("retry-after")).toBe("1");
    // Each asked the other's /healthz once (the peer challenge), then one forward each way at most.
    expect(instB.seen.filter((h) => h.url !== "/healthz")).toHaveLength(1);
    expect(instA.seen.filter((h) => h.url !== "/healthz")).toHaveLength(1);
  });

  it("answers here what needs no owner: a run with no lease, a token in the URL; a run leased to itself but not live is moving", async () => {
    const { follower, ownership, runId, owner } = await ownerAndFollower();
    ownership.holders.clear();
    // No lease (settled, or unknown here): read from this instance's store — which lacks the run.
    expect((await fetchJson(follower.url, "GET", `/runs/${runId}`)).body.code).toBe("JR2_ERR_RUN_NOT_FOUND");
    // Leased under its own id but not in its memory (let go, being restored): 503, never "not
    // found" — a Harness reading 404 for a Turn abandons it (found freezing PostgreSQL).
    ownership.holders.set(runId, leaseOf(runId, "a", follower.url));
    const own = await fetchJson(follower.url, "GET", `/runs/${runId}`);
    expect([own.status, own.body.code]).toEqual([503, "JR2_ERR_RUN_MOVING"]);
    ownership.holders.set(runId, leaseOf(runId, "b", owner.url));
    const inUrl = await fetchJson(follower.url, "GET", `/runs/${runId}?token=${INSTANCE_TOKEN}`);
    expect(inUrl.status).toBe(400);
    expect(owner.seen.filter((h) => h["x-jr2-forwarded-by"])).toHaveLength(0);
  });

  it("an owner whose advertised URL reaches the forwarder itself: 503, no loop, and one error naming JR2_ADVERTISE_URL", async () => {
    const lines: string[] = [];
    const { follower, ownership, runId, owner } = await ownerAndFollower(PEER_KEY, lines);
    ownership.holders.set(runId, leaseOf(runId, "b", follower.url)); // b misconfigured: a's URL
    for (let i = 0; i < 2; i++) {
      const res = await fetchJson(follower.url, "GET", `/runs/${runId}`);
      expect([res.status, res.body.code]).toEqual([503, "JR2_ERR_RUN_MOVING"]);
    }
    const errors = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 50);
    expect(errors).toEqual([expect.objectContaining({ owner: "b", instanceId: "a" })]);
    expect(errors[0].msg).toContain("JR2_ADVERTISE_URL");
    expect(owner.seen.filter((h) => h["x-jr2-forwarded-by"])).toHaveLength(0);
  });

  it("logs each forward at debug with the runId and the target, never a token", async () => {
    const lines: string[] = [];
    const { owner, follower, ownership, runId, iid } = await ownerAndFollower(PEER_KEY, lines);
    const sandboxToken = mintSandboxToken(SANDBOX_KEY, "ws-logged");
    await fetchJson(follower.url, "GET", agentUrl(iid, "surface"), undefined, {
      authorization: `Bearer ${sandboxToken}`,
    });
    const forwarded = lines
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === "request forwarded to the run's owner");
    expect(forwarded).toEqual([expect.objectContaining({ level: 20, runId, target: owner.url, owner: "b" })]);
    // And when the owner cannot be reached.
    ownership.holders.set(runId, leaseOf(runId, "b", await closedUrl(), 1000));
    expect((await fetchJson(follower.url, "GET", `/runs/${runId}`)).status).toBe(503);
    const all = lines.join("\n");
    expect(all).toContain("the run's owner cannot be reached");
    expect(all).not.toContain(sandboxToken);
    expect(all).not.toContain(INSTANCE_TOKEN);
  });

  it("a lease table that cannot be read answers 503 JR2_ERR_STORE_FAILING with Retry-After, not a 500", async () => {
    const { follower, ownership, runId } = await ownerAndFollower();
    ownership.holder = async () => {
      throw new Error("connection terminated");
    };
    const res = await fetchJson(follower.url, "GET", `/runs/${runId}`);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("JR2_ERR_STORE_FAILING");
    expect(res.headers.get("retry-after")).toBe("2");
  });
});
