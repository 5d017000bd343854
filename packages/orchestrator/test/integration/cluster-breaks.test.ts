/**
 * A bad day for two Orchestrators on one PostgreSQL store (issue 15, ADR-0280), on the real
 * binaries (cluster.ts): what an adversarial review found.
 * - **Rolling restart** (SIGTERM A, start it again, then the same for B) while `review` runs:
 *   each graceful stop hands the run on at once (its leases expired by `relinquish`, not a
 *   lease later), a `jr2 follow --url A,B` started on A follows it across both stops, and the
 *   run succeeds with exactly one delivered pick per Turn.
 * - **Forwarding keeps the owner's answer**: through the non-owner, a 1 MB body reaches the
 *   owner, and the owner's 4xx bytes come back exactly as the owner answers them directly —
 *   a JSON body of `null` included (it used to be sent without its bytes: a 503 after a wait).
 * - **PostgreSQL frozen** (its postmaster and every backend SIGSTOPped for 4 s, past the
 *   lease) with a run live on each instance: neither instance crashes, `/healthz` answers,
 *   and after SIGCONT both runs finish `succeeded` with one delivered pick per Turn.
 * Needs the built binaries (`pnpm build`) and PostgreSQL (`JR2_TEST_PG_URL`, test/pg.ts).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { missingBinaries } from "../../../conformance/src/index.js";
import { pgAdminUrl } from "../pg.js";
import { type Cluster, type Instance, startCluster } from "./cluster.js";
import { jr2, onePickPerTurn, reviewWithLiveTurn, sleep, slowModels, until } from "./cluster-scenarios.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../fixtures/plain-review/", import.meta.url));
const _cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const _LATENCY_MS = 700;
/** The first Harness call `instance` sent after `since` (ms), awaited. */
const firstCallBy = (c: Cluster, instance: string, since: number) =>
  until(`${instance}'s first Harness call`, 30_000, async () =>
    c.harnessCalls.find((call) => call.instance === instance && call.at > since),
  );

/** Raw bytes of one request to `target` with the instance token. */
async function raw(c: Cluster, target: Instance, path: string, body: string) {
  const res = await fetch(`${target.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${c.instanceToken}`, "content-type": "application/json" },
    body,
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, text: await res.text() };
}

/**
 * The pids of the test cluster's postmaster and its backends: the server names its data
 * directory (wherever the cluster was made: `.ci/run`'s, `scripts/with-pg.sh`'s), whose
 * `postmaster.pid` names the postmaster.
 */
async function pgProcesses(): Promise<number[]> {
  const admin = new pg.Client(pgAdminUrl());
  await admin.connect();
  let dataDir: string;
  try {
    dataDir = (await admin.query<{ data_directory: string }>("SHOW data_directory")).rows[0]!.data_directory;
  } finally {
    await admin.end();
  }
  const postmaster = Number(readFileSync(`${dataDir}/postmaster.pid`, "utf8").split("\n")[0]);
  const children = execFileSync("ps", ["-o", "pid=", "--ppid", String(postmaster)], { encoding: "utf8" })
    .split("\n")
    .map((l) => Number(l.trim()))
    .filter((pid) => pid > 0);
  return [postmaster, ...children];
}

/** Answers the `merge` Gate of `runId` through `via` until the run is done. */
async function driveToDone(c: Cluster, via: Instance, runId: string): Promise<void> {
  await until(`run ${runId} done`, 120_000, async () => {
    const { body } = await c.http(via, `/runs/${runId}`);
    if (body?.status === "done") return true;
    for (const gate of (body?.gates as Array<{ id: string; acceptsNow: string[] }>) ?? [])
      if (gate.acceptsNow.includes("merge"))
        await c.http(via, `/runs/${runId}/gates/${gate.id}/events`, {
          method: "POST",
          body: '{"type":"merge"}',
        });
    return undefined;
  });
}

describe.skipIf(missing.length > 0 || !pgAdminUrl())("two Orchestrators on a bad day (issue 15)", () => {
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  });

  it("a rolling restart (SIGTERM A, then B) hands the run on at once; a follow on A,B sees it succeed", async () => {
    // A long lease: a handover by expiry would take more than LEASE_MS; relinquish takes a tick.
    const LEASE_MS = 6_000;
    cluster = await startCluster({ repoRoot, workflowsDir, models: slowModels, leaseMs: LEASE_MS });
    const c = cluster;
    const { runId } = await reviewWithLiveTurn(c, c.a);
    const follow = jr2(
      `${c.a.url},${c.b.url}`,
      c.instanceToken,
      ["follow", runId, "--answer-gates", "merge_gate=merge"],
      150_000,
    );
    await sleep(500);

    const stoppedA = Date.now();
    await c.a.stop();
    const byB = await firstCallBy(c, "b", stoppedA);
    expect(byB.at - stoppedA, c.b.log()).toBeLessThan(LEASE_MS);
    await c.a.start();

    const live = await c.http(c.b, `/runs/${runId}`);
    if (live.body?.status === "running") {
      const stoppedB = Date.now();
      await c.b.stop();
      const byA = await firstCallBy(c, "a", stoppedB);
      expect(byA.at - stoppedB, c.a.log()).toBeLessThan(LEASE_MS);
      await c.b.start();
    }

    const { code, out } = await follow;
    expect(out, `${out}\n--- A:\n${c.a.log()}\n--- B:\n${c.b.log()}`).toMatch(/outcome succeeded/);
    expect(code).toBe(0);
    await onePickPerTurn(c, c.a, runId);
  }, 240_000);

  it("a request forwarded to the owner carries a 1 MB body, and the owner's 4xx bytes come back as they are", async () => {
    cluster = await startCluster({ repoRoot, workflowsDir, models: slowModels, leaseMs: 1_500 });
    const c = cluster;
    const { runId } = await reviewWithLiveTurn(c, c.a);
    const path = `/runs/${runId}/gates/merge_gate/events`;
    const bodies = {
      large: JSON.stringify({ type: 123, pad: "x".repeat(1_000_000) }),
      refused: JSON.stringify({ type: 123 }),
      null: "null",
    };
    for (const [name, body] of Object.entries(bodies)) {
      const direct = await raw(c, c.a, path, body);
      const forwarded = await raw(c, c.b, path, body);
      expect(direct.status, `${name}: ${direct.text}`).toBeGreaterThanOrEqual(400);
      expect(direct.status, `${name}: ${direct.text}`).toBeLessThan(500);
      expect({ name, ...forwarded }).toEqual({ name, ...direct });
    }
  }, 120_000);
  it("PostgreSQL frozen for 4 s (past the lease) with a run live on each: no crash, /healthz answers, both succeed", async () => {
    cluster = await startCluster({ repoRoot, workflowsDir, models: slowModels, leaseMs: 1_500 });
    const c = cluster;
    const onA = (await reviewWithLiveTurn(c, c.a)).runId;
    const onB = (await reviewWithLiveTurn(c, c.b)).runId;
    const pids = await pgProcesses();
    for (const pid of pids) process.kill(pid, "SIGSTOP");
    try {
      await sleep(2_500);
      for (const instance of [c.a, c.b]) {
        const health = await fetch(`${instance.url}/healthz`, { signal: AbortSignal.timeout(3_000) });
        expect(health.status, instance.log()).toBe(200);
      }
      await sleep(1_500);
    } finally {
      for (const pid of pids) process.kill(pid, "SIGCONT");
    }
    try {
      await Promise.all([driveToDone(c, c.a, onA), driveToDone(c, c.b, onB)]);
    } catch (error) {
      const detail = async (id: string) => JSON.stringify((await c.http(c.a, `/runs/${id}`)).body);
      throw new Error(
        `${error}\nA's run: ${await detail(onA)}\nB's run: ${await detail(onB)}\n--- A:\n${c.a.log()}\n--- B:\n${c.b.log()}\n--- Harness:\n${c.harnessLog()}`,
      );
    }
    const runs = [(await c.http(c.a, `/runs/${onA}`)).body, (await c.http(c.a, `/runs/${onB}`)).body];
    const logs = `--- A:\n${c.a.log()}\n--- B:\n${c.b.log()}\n--- Harness:\n${c.harnessLog()}`;
    expect(
      runs.map((r) => r?.outcome),
      `${JSON.stringify(runs)}\n${logs}`,
    ).toEqual(["succeeded", "succeeded"]);
    // Letting go by its own clock while the row is still its own is no JR2_INSTANCE_ID twin.
    expect(logs).not.toContain("under this instance's own JR2_INSTANCE_ID");
    for (const instance of [c.a, c.b])
      expect((await c.http(instance, "/healthz")).status, instance.log()).toBe(200);
    await onePickPerTurn(c, c.a, onA);
    await onePickPerTurn(c, c.a, onB);
  }, 240_000);
});
