/**
 * What the two-instance tests (failover.test.ts, cluster-breaks.test.ts) share on a cluster:
 * slowed model-sim models, polling, a `review` run with its Turn admitted, the one-pick-per-Turn
 * check and the CLI.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { RunFeedEvent } from "@jr2/wire";
import { expect } from "vitest";
import type { Cluster, Instance, Json } from "./cluster.js";
import { exampleModels } from "./example-models.js";

const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
/** model-sim holds each answer back this long, so a Turn is live long enough to be caught. */
const LATENCY_MS = 700;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const slowModels = (baseUrl: string) =>
  Object.fromEntries(
    Object.entries(exampleModels(baseUrl)).map(([name, m]) => [
      name,
      { ...m, id: `${m.id}+latency:${LATENCY_MS}` },
    ]),
  );

/** Polls `probe` every 200 ms until it returns a value, or throws after `ms`. */
export async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** Starts `review` on `on` and waits until one of its Turns is live there: its runId and that Turn's iid. */
export async function reviewWithLiveTurn(
  cluster: Cluster,
  on: Instance,
): Promise<{ runId: string; iid: string }> {
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
  // ...and ledgered: a kill between the Harness's answer and the ledger's commit (the admit-sent
  // window, ADR-0257) rightly makes the adopter admit again instead of re-attaching.
  await until("the Turn's admission ledgered", 30_000, async () =>
    (await cluster.ledgered(runId, iid)) ? true : undefined,
  );
  return { runId, iid };
}

/** Every delivered pick on the log matches one picked Turn, in order: none lost, none doubled. */
export async function onePickPerTurn(cluster: Cluster, on: Instance, runId: string): Promise<void> {
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
export function jr2(
  url: string,
  token: string,
  args: string[],
  timeoutMs = 120_000,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args, "--url", url],
      { env: { ...process.env, JR2_INSTANCE_TOKEN: token }, timeout: timeoutMs },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}
