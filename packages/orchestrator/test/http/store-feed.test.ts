/**
 * The run feed follows across instances (issue 15 item 2, ADR-0280): `GET /runs/:runId/events`
 * of a run hosted by another instance sharing the store is served from the store — rows by
 * seq, woken by the store's notices `(runId, seq)` or its poll — in order, once each, ending on
 * the final status with the same bytes as the owner's own stream; it keeps going when the owner
 * dies and another instance adopts the run.
 */
import type { ServerResponse } from "node:http";
import { PassThrough } from "node:stream";
import type { RunFeedEvent } from "@jr2/wire";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { streamEvents } from "../../src/http/routes/run-events-stream.js";
import { buildOrchestrator } from "../../src/index.js";
import { createRunFeed } from "../../src/runs/feed.js";
import type { RunHost } from "../../src/runs/run-host.js";
import { createStoreFeed } from "../../src/runs/store-feed.js";
import { type SharedStore, sharedMemoryStore } from "./fake-ownership.js";
import { agentUrl, call, flow, INSTANCE_TOKEN, SANDBOX_KEY } from "./fixture.js";

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0).reverse()) await app.close();
});

async function instance(store: SharedStore): Promise<FastifyInstance> {
  const app = await buildOrchestrator({
    workflows: new Map([["flow", flow]]),
    auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY },
    store,
  });
  apps.push(app);
  return app;
}

/** A follower and an owner on one store (both built before the run starts: it is the owner's). */
async function followerAndOwner(options: { withNotices?: boolean } = {}) {
  const store = sharedMemoryStore(options);
  const follower = await instance(store);
  const owner = await instance(store);
  const started = await call(owner, "POST", "/workflows/flow/runs", { input: { task: "t" } });
  const runId = started.body.runId as string;
  const iid = (await call(owner, "GET", `/runs/${runId}`)).body.turns[0].iid as string;
  return { store, follower, owner, runId, iid };
}

/** Opens the run's stream at `app`; resolves with its whole body once it ended. */
function follow(app: FastifyInstance, runId: string, headers: Record<string, string> = {}, query = "") {
  return app
    .inject({
      method: "GET",
      url: `/runs/${runId}/events${query}`,
      headers: { authorization: `Bearer ${INSTANCE_TOKEN}`, ...headers },
    })
    .then((res) => ({ status: res.statusCode, type: res.headers["content-type"], body: res.body }));
}

/** The SSE messages of a body: `id`, `event`, parsed `data`. */
function messages(body: string): Array<{ id: number; event: string; data: Record<string, unknown> }> {
  return body
    .split("\n\n")
    .filter((m) => m.startsWith("id: "))
    .map((m) => {
      const [id, event, data] = m.split("\n");
      return {
        id: Number(id?.slice(4)),
        event: event?.slice(7) ?? "",
        data: JSON.parse(data?.slice(6) ?? "null"),
      };
    });
}

/** Waits until the follower's stream subscribed to the store's notices. */
async function subscribed(store: SharedStore, count = 1): Promise<void> {
  for (let i = 0; i < 200 && store.notices.subscribers() < count; i++)
    await new Promise((r) => setTimeout(r, 10));
  expect(store.notices.subscribers()).toBeGreaterThanOrEqual(count);
}

const pick = (app: FastifyInstance, iid: string, toolCallId: string) =>
  call(app, "POST", agentUrl(iid, "picks"), { name: "note", arguments: {}, toolCallId });

describe("the run feed from the store (ADR-0280)", () => {
  it("streams another instance's run: every event once, in order, ending on its final status — the owner's bytes", async () => {
    const { store, follower, owner, runId, iid } = await followerAndOwner();
    await pick(owner, iid, "c1");
    const streaming = follow(follower, runId);
    await subscribed(store);
    await pick(owner, iid, "c2");
    await call(owner, "POST", `/runs/${runId}/cancel`);
    const got = await streaming;
    expect(got.status).toBe(200);
    expect(got.type).toContain("text/event-stream");
    const ids = messages(got.body).map((m) => m.id);
    expect(ids).toEqual([...ids.keys()]);
    expect(messages(got.body).filter((m) => m.event === "pick")).toHaveLength(2);
    expect(messages(got.body).at(-1)?.data).toMatchObject({ type: "status", status: "cancelled" });
    // The owner's own stream of the settled run: the very same bytes.
    expect(got.body).toBe((await follow(owner, runId)).body);
    expect(store.notices.subscribers()).toBe(0);
  });

  it("keeps going when the owner dies and another instance adopts the run", async () => {
    const { store, follower, owner, runId, iid } = await followerAndOwner();
    await pick(owner, iid, "before");
    const streaming = follow(follower, runId);
    await subscribed(store);
    // The owner stops as at a crash: actors stopped unsaved, the run stays `running` in the store.
    apps.splice(apps.indexOf(owner), 1);
    await owner.close();
    const adopter = await instance(store); // restores the run as after a restart
    await pick(adopter, iid, "after");
    await call(adopter, "POST", `/runs/${runId}/cancel`);
    const all = messages((await streaming).body);
    expect(all.map((m) => m.id)).toEqual([...all.keys()]);
    const picks = all.filter((m) => m.event === "pick");
    expect(picks).toHaveLength(2);
    expect(all.at(-1)?.data).toMatchObject({ type: "status", status: "cancelled" });
  });

  it("resumes after Last-Event-ID (and from `since`), still ending on the final status", async () => {
    const { store, follower, owner, runId, iid } = await followerAndOwner();
    await pick(owner, iid, "c1");
    const last = (await store.lastEventSeq(runId)) ?? 0;
    expect(last).toBeGreaterThanOrEqual(1);
    const resumed = follow(follower, runId, { "last-event-id": String(last - 1) });
    const since = follow(follower, runId, {}, `?since=${last}`);
    await subscribed(store, 2);
    await call(owner, "POST", `/runs/${runId}/cancel`);
    const r = await resumed;
    expect(messages(r.body)[0]?.id).toBe(last);
    expect(messages(r.body).at(-1)?.data).toMatchObject({ type: "status", status: "cancelled" });
    // Both start at `last`: the same bytes.
    expect((await since).body).toBe(r.body);
  });

  it("finds committed events by its poll when no notice comes", async () => {
    const { follower, owner, runId, iid } = await followerAndOwner({ withNotices: false });
    const streaming = follow(follower, runId);
    await new Promise((r) => setTimeout(r, 50));
    await pick(owner, iid, "quiet");
    await call(owner, "POST", `/runs/${runId}/cancel`);
    const all = messages((await streaming).body);
    expect(all.filter((m) => m.event === "pick")).toHaveLength(1);
    expect(all.at(-1)?.data).toMatchObject({ type: "status", status: "cancelled" });
  });

  it("a `since` past the log's end still ends with the final status", async () => {
    const { store, follower, owner, runId } = await followerAndOwner();
    const streaming = follow(follower, runId, {}, "?since=1000");
    await subscribed(store);
    await call(owner, "POST", `/runs/${runId}/cancel`);
    const all = messages((await streaming).body);
    expect(all).toHaveLength(1);
    expect(all[0]?.data).toMatchObject({ type: "status", status: "cancelled" });
  });
});

describe("a stream of a run this instance lets go of (ADR-0280)", () => {
  it("goes on from the store once the run leaves memory unsettled: each event once, ending on the final status", async () => {
    const store = sharedMemoryStore();
    const at = "2026-01-01T00:00:00.000Z";
    const status = (seq: number, s: string) => ({ seq, at, type: "status", status: s }) as RunFeedEvent;
    const admission = (seq: number) =>
      ({ seq, at, type: "admission", agent: "worker" }) as unknown as RunFeedEvent;
    const feed = createRunFeed(() => new Date(at));
    feed.record((event) => void store.appendEvents("run-x", [event]));
    feed.append({ type: "status", status: "running" } as never);
    let live = true;
    const host = { isLive: () => live, eventLog: async () => [] } as unknown as RunHost;
    const chunks: string[] = [];
    const out = Object.assign(new PassThrough(), { writeHead() {}, flushHeaders() {} });
    out.on("data", (c) => chunks.push(String(c)));
    const ended = new Promise((resolve) => out.on("end", resolve));
    await streamEvents({
      host,
      runId: "run-x",
      feed,
      since: 0,
      out: out as unknown as ServerResponse,
      streams: new Set(),
      heartbeatMs: 60_000,
      handover: createStoreFeed(store, store.notices, "run-x", { pollMs: 20 }),
      handoverCheckMs: 10,
    });
    feed.append({ type: "admission", agent: "worker" } as never);
    // Let go: out of memory, unsettled. The adopter's events reach the store (and a notice).
    live = false;
    await new Promise((r) => setTimeout(r, 50));
    await store.appendEvents("run-x", [admission(2), status(3, "done")]);
    await ended;
    const ids = messages(chunks.join("")).map((m) => m.id);
    expect(ids).toEqual([0, 1, 2, 3]);
    expect(messages(chunks.join("")).at(-1)?.data).toMatchObject({ status: "done" });
  });
});

describe("createStoreFeed (ADR-0280)", () => {
  const at = "2026-01-01T00:00:00.000Z";
  const event = (seq: number, status?: string) =>
    (status
      ? { seq, at, type: "status", status }
      : { seq, at, type: "admission", agent: "w" }) as RunFeedEvent;
  /** A store double: its rows, its run's status, and its notices. */
  function fakeStore() {
    const rows: RunFeedEvent[] = [];
    const listeners = new Set<(seq: number) => void>();
    const state = { status: "running" };
    const store = {
      events: async (_runId: string, from: number, limit: number) =>
        rows.filter((e) => e.seq >= from).slice(0, limit),
      lastEventSeq: async () => rows.at(-1)?.seq,
      load: async () => ({ status: state.status }) as never,
    };
    const notices = {
      subscribe: (_runId: string, onSeq: (seq: number) => void) => {
        listeners.add(onSeq);
        return () => listeners.delete(onSeq);
      },
    };
    const commit = (...events: RunFeedEvent[]) => {
      rows.push(...events);
      for (const e of events) for (const l of [...listeners]) l(e.seq);
    };
    return { store, notices, state, commit, listeners };
  }

  it("tells each row once in seq order across repeated and early notices, from the page size on", async () => {
    const f = fakeStore();
    f.commit(event(0, "running"), event(1), event(2));
    const told: number[] = [];
    const ended = new Promise<void>((resolve) =>
      createStoreFeed(f.store, f.notices, "r", { pageSize: 2, pollMs: 5_000 }).follow(1, {
        event: (e) => told.push(e.seq),
        end: resolve,
        error: resolve,
      }),
    );
    await new Promise((r) => setTimeout(r, 20));
    f.commit(event(3));
    f.commit(event(4), event(5));
    f.commit(event(6, "done"));
    await ended;
    expect(told).toEqual([1, 2, 3, 4, 5, 6]);
    expect(f.listeners.size).toBe(0);
  });

  it("ends once the stored run is no longer running, even without a status row past `from`", async () => {
    const f = fakeStore();
    f.commit(event(0, "running"), event(1));
    const told: number[] = [];
    const ended = new Promise<void>((resolve) =>
      createStoreFeed(f.store, f.notices, "r", { pollMs: 10 }).follow(2, {
        event: (e) => told.push(e.seq),
        end: resolve,
        error: resolve,
      }),
    );
    await new Promise((r) => setTimeout(r, 30));
    f.state.status = "drifted";
    await ended;
    // No final status row to tell (its last is `running`): the follow just ends.
    expect(told).toEqual([]);
  });
});
