/**
 * Issue 13's fork done-when on the real stack (ADR-0270): a `review` run goes to its end; a
 * fork from the version where the reviewer's Turn was live starts *at* that version (its first
 * event names that version's state and context), model-sim gets no request for the Turn that
 * ended before it (the implement Turn), the first Turn it admits is the reviewer's, every iid it
 * admits is its own, it runs to `succeeded` with one delivered pick per Turn, and the source is
 * untouched (its versions as they were; its log gains only `forked-to`). Then a kill right after
 * a fork's commit (`JR2_CRASH_AT=fork-committed`): after the restart the fork is whole and runs
 * to its end, no pick delivered twice. `jr2 history` and `jr2 fork` print it. Needs the built binaries.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { RunFeedEvent, RunHistory, RunVersion, TurnList } from "@jr2/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, startStack } from "../../../conformance/src/index.js";
import { conversationOpenings, repeatsWithChangedBytes } from "../crash/invariants.js";
import { reviewModels } from "./example-models.js";
import { type Json, orchestratorHttp } from "./stack-http.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../fixtures/plain-review/", import.meta.url));
const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const IMPLEMENT = "Implement a hello() function in hello.js.";

describe.skipIf(missing.length > 0)("forking a run on the real stack (issue 13 item 2)", () => {
  let stack: Stack;
  let dataDir: string;

  const { http, events } = orchestratorHttp(() => stack);
  /** Waits for `runId` to settle, merging at its Gate; then until its log is still. */
  async function finish(runId: string): Promise<Json> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { body } = await http(`/runs/${runId}`);
      if (body?.status !== "running") break;
      for (const gate of (body.gates as Array<{ id: string; acceptsNow: string[] }>) ?? [])
        if (gate.acceptsNow.includes("merge"))
          await http(`/runs/${runId}/gates/${gate.id}/events`, { method: "POST", body: '{"type":"merge"}' });
      if (Date.now() > deadline) throw new Error(`run ${runId} did not end: ${JSON.stringify(body)}`);
      await sleep(50);
    }
    let last = -1;
    for (let stable = 0; stable < 6; ) {
      const n = (await events(runId)).length;
      stable = n === last ? stable + 1 : 0;
      last = n;
      await sleep(150);
    }
    return (await http(`/runs/${runId}`)).body!;
  }
  const versions = async (runId: string) => (await http(`/runs/${runId}/history`)).body as RunHistory;
  const version = async (runId: string, v: number) =>
    (await http(`/runs/${runId}/history/${v}`)).body as RunVersion;
  /** The first version whose ledger holds the reviewer's Turn: it is live there. */
  async function reviewerLive(runId: string): Promise<RunVersion> {
    for (const v of (await versions(runId)).versions) {
      const whole = await version(runId, v.version);
      if (whole.ledger.some((e) => e.child?.endsWith("#reviewer"))) return whole;
    }
    throw new Error(`no version of ${runId} has the reviewer's Turn`);
  }
  /** The fork's Turns each ended by exactly one delivered pick; every iid it ledgered is its own. */
  async function expectOwnTurns(forkId: string, sourceId: string, log: RunFeedEvent[]) {
    const turns = ((await http(`/runs/${forkId}/turns`)).body as TurnList).turns;
    const picks = log.filter((e) => e.type === "pick");
    const admitted = log.filter((e) => e.type === "admission" && e.kind === "task");
    expect(turns.length).toBe(admitted.length);
    expect(picks.length, "one delivered pick per Turn").toBe(turns.length);
    for (const t of turns) expect(t.outcome).toBe("picked");
    for (const v of (await versions(forkId)).versions)
      for (const e of (await version(forkId, v.version)).ledger) {
        expect(e.iid.startsWith(`${forkId}/`), `fork iid ${e.iid}`).toBe(true);
        expect(e.iid).not.toContain(sourceId);
      }
    return turns;
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "jr2-fork-"));
    stack = await startStack("process", {
      repoRoot,
      workflowsDir,
      orchestratorEnv: { JR2_DATA_DIR: dataDir },
      models: reviewModels,
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("forks review at the reviewer's live Turn: starts there, admits that Turn first under its own iids, and succeeds; the source is untouched", async () => {
    const started = await http("/workflows/review/runs", { method: "POST", body: '{"input":{}}' });
    const sourceId = started.body?.runId as string;
    expect((await finish(sourceId)).outcome).toBe("succeeded");
    const sourceVersions = await versions(sourceId);
    const sourceLog = await events(sourceId);
    const at = await reviewerLive(sourceId);
    // The implement Turn ended before it; the body Machine is in `review`.
    expect(JSON.stringify(at.snapshot)).toContain('"value":"review"');
    const sentBefore = (await stack.requests()).length;

    const env = { ...process.env, JR2_URL: stack.orchestratorUrl, JR2_INSTANCE_TOKEN: stack.instanceToken };
    const forked = (
      await promisify(execFile)("node", [cli, "fork", sourceId, "--at", String(at.version)], { env })
    ).stdout;
    const forkId = /→ (\S+)/.exec(forked)?.[1] as string;
    expect(forked).toContain(`forked ${sourceId}@${at.version} → ${forkId}`);
    // review's one workspace is plain: named, and no Repo Slot line (ADR-0228).
    expect(forked).toContain(
      `its plain workspace \`review\` (no Repo Slot) starts with an empty directory under ${forkId} (files are carried only by Repo Slots)`,
    );
    expect(forked).not.toContain("Repo Slots start");
    const fork = await finish(forkId);
    expect(fork.outcome).toBe("succeeded");

    // It starts at the version: its first event names that version's state and context.
    const log = await events(forkId);
    expect(log[0]).toMatchObject({
      type: "forked-from",
      seq: 0,
      runId: sourceId,
      version: at.version,
      by: "cli",
      value: at.value,
      context: at.context,
    });
    const firstAdmission = log.find((e) => e.type === "admission");
    expect(firstAdmission).toMatchObject({ kind: "task", agent: "reviewer" });
    // model-sim got nothing for the implement Turn (it ended before the version); the first
    // request is the reviewer's.
    const sent = (await stack.requests()).slice(sentBefore);
    expect(sent.length).toBeGreaterThan(0);
    for (const r of sent) expect(r.raw).not.toContain(IMPLEMENT);
    expect(sent[0]!.model).toBe("script:request_changes,approve");
    for (const r of sent) expect(r.raw).not.toContain(sourceId);
    // A new conversation with its task, with the source's prefix bytes (system prompt and tools):
    // the provider's prefix cache still covers them.
    const prefix = (raw: string) => {
      const body = JSON.parse(raw) as { messages: unknown[]; tools: unknown };
      return JSON.stringify([body.messages[0], body.tools]);
    };
    const sourceReviewer = (await stack.requests())
      .slice(0, sentBefore)
      .find((r) => r.model === sent[0]!.model);
    expect(prefix(sent[0]!.raw)).toBe(prefix(sourceReviewer!.raw));
    expect(repeatsWithChangedBytes(sent)).toEqual([]);
    for (const [model, opened] of conversationOpenings(sent)) expect(opened.renewed, model).toBe(0);
    const turns = await expectOwnTurns(forkId, sourceId, log);
    expect(turns[0]).toMatchObject({ agent: "reviewer", state: "review" });

    // The source: versions unchanged; its log gained only `forked-to`.
    expect(await versions(sourceId)).toEqual(sourceVersions);
    const after = await events(sourceId);
    expect(after.slice(0, sourceLog.length)).toEqual(sourceLog);
    expect(after.slice(sourceLog.length)).toEqual([
      expect.objectContaining({ type: "forked-to", runId: forkId, version: at.version, by: "cli" }),
    ]);
    const history = (await promisify(execFile)("node", [cli, "history", sourceId], { env })).stdout;
    expect(history).toMatch(new RegExp(`^${sourceId}: \\d+ versions kept`));
    expect(history).toMatch(/pick (approve|request_changes|finish) \(/);
    expect(history).toContain("← merge (by http)");
    // The workspace() body's state shows beside the root's (before: only `working`).
    expect(history).toMatch(/ working › (implement|review|fix) /);
    const forkHistory = (await promisify(execFile)("node", [cli, "history", forkId], { env })).stdout;
    expect(forkHistory).toContain(`forked from ${sourceId}@${at.version} (by cli)`);
  }, 240_000);

  it("a kill right after a fork commits leaves the fork whole: restored at the next start, it runs to its end, no pick twice", async () => {
    const sentBefore = (await stack.requests()).length;
    const started = await http("/workflows/review/runs", { method: "POST", body: '{"input":{}}' });
    const sourceId = started.body?.runId as string;
    expect((await finish(sourceId)).outcome).toBe("succeeded");
    const at = await reviewerLive(sourceId);
    await stack.killOrchestrator();
    await stack.startOrchestrator({ JR2_CRASH_AT: "fork-committed" });
    const logStart = stack.orchestratorLog().length;
    const killed = await fetch(`${stack.orchestratorUrl}/runs/${sourceId}/fork`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
      body: JSON.stringify({ at: at.version }),
    }).then(
      (r) => r.status,
      () => "killed",
    );
    expect(killed).toBe("killed");
    await sleep(300);
    expect(stack.orchestratorLog().slice(logStart)).toContain("jr2 crash-point fork-committed");
    await stack.startOrchestrator();
    // Exactly one fork of this source came of the killed request, committed whole.
    const ofSource: string[] = [];
    for (const r of (await http("/runs?workflow=review")).body as Json[]) {
      const first = (await http(`/runs/${r.runId}/history/1`)).body as RunVersion | null;
      if (first?.cause?.kind === "fork" && first.cause.from.runId === sourceId) ofSource.push(r.runId);
    }
    expect(ofSource).toHaveLength(1);
    const forkId = ofSource[0]!;
    expect((await finish(forkId)).outcome).toBe("succeeded");
    const log = await events(forkId);
    expect(log[0]).toMatchObject({ type: "forked-from", runId: sourceId, version: at.version });
    await expectOwnTurns(forkId, sourceId, log);
    // The crash harness's model-side invariant: a request repeats only byte-identical.
    expect(repeatsWithChangedBytes((await stack.requests()).slice(sentBefore))).toEqual([]);
  }, 240_000);
});
