/**
 * Issue 15's done-when on the real binaries (ADR-0280): two Orchestrators on one PostgreSQL
 * store, one Harness that knows both (A first), model-sim.
 * - **Failover**: `review` runs with its Turn live on A; A is SIGKILLed; B adopts within the
 *   lease, the Turn re-attaches, the run finishes `succeeded` with exactly one delivered pick per
 *   Turn, and a `jr2 follow` pointed at B follows it throughout (answering its Gate).
 * - **Fencing**: A is SIGSTOPped past its lease with a Turn live; B adopts; A is resumed: its
 *   writes are refused, it lets go, and the Harness receives no abort and no admission from A
 *   after the adoption. The run still finishes on B.
 * Needs the built binaries (`pnpm build`) and PostgreSQL (`JR2_TEST_PG_URL`, test/pg.ts).
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { RunFeedEvent } from "@jr2/wire";
import { afterEach, describe, expect, it } from "vitest";
import { missingBinaries } from "../../../conformance/src/index.js";
import { pgAdminUrl } from "../pg.js";
import { type Cluster, type Instance, type Json, startCluster } from "./cluster.js";
import { exampleModels } from "./example-models.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../../../../examples/workflows/", import.meta.url));
const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const LEASE_MS = 1500;
/** model-sim holds each answer back this long, so a Turn is live long enough to be caught. */
const LATENCY_MS = 700;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const slowModels = (baseUrl: string) =>
  Object.fromEntries(
    Object.entries(exampleModels(baseUrl)).map(([name, m]) => [
      name,
      { ...m, id: `${m.id}+latency:${LATENCY_MS}` },
    ]),
  );

/** Polls `probe` every 200 ms until it returns a value, or throws after `ms`. */
async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** Starts `review` on `on` and waits until one of its Turns is live there: its runId and that Turn's iid. */
async function reviewWithLiveTurn(cluster: Cluster, on: Instance): Promise<{ runId: string; iid: string }> {
  const started = await cluster.http(on, "/workflows/review/runs", {
    method: "POST",
    body: JSON.stringify({ input: { task: "a hello() function in hello.js" } }),
  });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const runId = started.body?.runId as string;
  const iid = await until("a live Turn", 30_000, async () => {
    const run = await cluster.http(on, `/runs/${runId}`);
    return (run.body?.turns as Json[] | undefined)?.find((t) => typeof t.iid === "string")?.iid as
      | string
      | undefined;
  });
  // Live means admitted: the Harness got the Submission from this instance (its outbox sends it
  // after the commit, so a registered Turn is not yet admitted).
  await until("the Turn's admission", 30_000, async () =>
    cluster.harnessCalls.some(
      (call) =>
        call.instance === on.name &&
        call.method === "POST" &&
        call.path === `/conversations/${encodeURIComponent(iid)}/submissions`,
    )
      ? true
      : undefined,
  );
  return { runId, iid };
}

/** The Harness calls `instance` sent for the conversation at `iid` from `since` (ms) on. */
const callsFor = (cluster: Cluster, instance: string, iid: string, since: number) =>
  cluster.harnessCalls.filter(
    (call) => call.instance === instance && call.at >= since && call.path.includes(encodeURIComponent(iid)),
  );

/** Every delivered pick on the log matches one picked Turn, in order: none lost, none doubled. */
async function onePickPerTurn(cluster: Cluster, on: Instance, runId: string): Promise<void> {
  const log = await cluster.events(on, runId);
  const delivered = log.filter(
    (e): e is Extract<RunFeedEvent, { type: "pick" }> =>
      e.type === "pick" && (e.answer as { delivered?: boolean }).delivered === true,
  );
  const turns = ((await cluster.http(on, `/runs/${runId}/turns`)).body?.turns ?? []) as Json[];
  const picked = turns.filter((t) => t.outcome === "picked");
  expect(picked.length).toBeGreaterThan(0);
  expect(delivered.map((e) => `${e.agent}:${e.name}`)).toEqual(
    picked.map((t) => `${t.agent}:${t.pick.name}`),
  );
}

/** `jr2 <args>` with the instance token; resolves with its exit code and output. */
function jr2(url: string, token: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args, "--url", url],
      { env: { ...process.env, JR2_INSTANCE_TOKEN: token }, timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

describe.skipIf(missing.length > 0 || !pgAdminUrl())("runs move to a survivor (issue 15)", () => {
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  });

  it("A is killed with a Turn live: B adopts it, the Turn re-attaches, the run succeeds; a CLI on B follows throughout", async () => {
    cluster = await startCluster({ repoRoot, workflowsDir, models: slowModels, leaseMs: LEASE_MS });
    const c = cluster;
    const { runId, iid } = await reviewWithLiveTurn(c, c.a);
    const follow = jr2(c.b.url, c.instanceToken, ["follow", runId, "--answer-gates", "merge_gate=merge"]);
    // A second follower is given both URLs, A first (the client rule): it moves to B.
    const followBoth = jr2(`${c.a.url},${c.b.url}`, c.instanceToken, ["follow", runId]);
    await sleep(300);
    const killedAt = Date.now();
    await c.a.kill();

    const { code, out } = await follow;
    expect(out, `${out}\n--- B:\n${c.b.log()}`).toMatch(/outcome succeeded/);
    expect(code).toBe(0);
    // The follower was told of the move.
    expect(out).toMatch(/adopted +by instance b \(lease epoch \d+\)/);
    const both = await followBoth;
    expect(both.out, `${both.out}\n--- B:\n${c.b.log()}`).toMatch(/outcome succeeded/);
    expect(both.code).toBe(0);
    // B adopted within the lease (plus a renewal tick and the restore), then re-attached the Turn.
    const firstByB = c.harnessCalls.find((call) => call.instance === "b" && call.at > killedAt);
    expect(firstByB, c.b.log()).toBeDefined();
    expect(firstByB!.at - killedAt).toBeLessThan(LEASE_MS * 2 + 5_000);
    expect(c.b.log()).toMatch(/adopt/i);
    // Re-attached by turnId: B's first call on the live Turn's conversation reads its stream
    // (a later admission there is the coder's next Turn, after the reviewer's pick).
    const onIid = callsFor(c, "b", iid, killedAt);
    expect(onIid[0]?.method, JSON.stringify(onIid)).toBe("GET");
    expect(onIid[0]?.path).toContain("/stream?");
    const run = await c.http(c.b, `/runs/${runId}`);
    expect(run.body?.status).toBe("done");
    await onePickPerTurn(c, c.b, runId);
  }, 180_000);

  it("A is paused past its lease: B adopts; A resumed is fenced, lets go, and sends the Harness nothing", async () => {
    cluster = await startCluster({ repoRoot, workflowsDir, models: slowModels, leaseMs: LEASE_MS });
    const c = cluster;
    const { runId, iid } = await reviewWithLiveTurn(c, c.a);
    // A registered the Turn; wait until its admission reached the Harness, so the pause lands
    // on a Turn A drives (pausing before it left made the "A did drive the Turn" check flaky).
    await until("A's admission", 30_000, async () =>
      callsFor(c, "a", iid, 0).find((call) => call.method === "POST"),
    );
    c.a.pause();
    const adoptedAt = await until(
      "B's first Harness call",
      30_000,
      async () => c.harnessCalls.find((call) => call.instance === "b")?.at,
    );
    // Let B drive the run for a while, then wake A with its stale leases and open streams.
    await sleep(1_000);
    c.a.resume();
    await until("A letting go", 30_000, async () => (/let(ting)? go/i.test(c.a.log()) ? true : undefined));

    // The run finishes on B; its Gate is answered through A, which forwards to B now.
    await until("the run done", 90_000, async () => {
      const { body } = await c.http(c.a, `/runs/${runId}`);
      if (body?.status === "done") return true;
      for (const gate of (body?.gates as Array<{ id: string; acceptsNow: string[] }>) ?? [])
        if (gate.acceptsNow.includes("merge"))
          await c.http(c.a, `/runs/${runId}/gates/${gate.id}/events`, {
            method: "POST",
            body: '{"type":"merge"}',
          });
      return undefined;
    });

    // A did drive the Turn before its pause (the proxy saw its admission): the silence after is A's.
    expect(
      c.harnessCalls.some((call) => call.instance === "a" && call.method === "POST" && call.at < adoptedAt),
    ).toBe(true);
    const fromA = c.harnessCalls.filter((call) => call.instance === "a" && call.at >= adoptedAt);
    const sent = fromA.filter((call) => call.method === "POST");
    expect(sent, JSON.stringify(fromA)).toEqual([]);
    expect(c.a.log()).toMatch(/fenc|lease (was )?lost|let(ting)? go/i);
    await onePickPerTurn(c, c.b, runId);
  }, 180_000);
});
