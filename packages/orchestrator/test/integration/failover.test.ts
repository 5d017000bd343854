import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { missingBinaries } from "../../../conformance/src/index.js";
import { pgAdminUrl } from "../pg.js";
import { type Cluster, startCluster } from "./cluster.js";
import { jr2, onePickPerTurn, reviewWithLiveTurn, sleep, slowModels, until } from "./cluster-scenarios.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../fixtures/plain-review/", import.meta.url));
const _cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const LEASE_MS = 1500;
/** model-sim holds each answer back this long, so a Turn is live long enough to be caught. */
const _LATENCY_MS = 700;
/** The Harness calls `instance` sent for the conversation at `iid` from `since` (ms) on. */
const callsFor = (cluster: Cluster, instance: string, iid: string, since: number) =>
  cluster.harnessCalls.filter(
    (call) => call.instance === instance && call.at >= since && call.path.includes(encodeURIComponent(iid)),
  );

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
