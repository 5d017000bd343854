/**
 * Issue 27's done-when on the real stack (ADR-0175): `review` on model-sim with the Harness
 * keeping its durable state in `JR2_HARNESS_DATA_DIR`. The Harness is SIGKILLed and restarted
 * (model-sim is not) — between the coder's two Turns, and in the middle of the coder's `fix`
 * Submission. The coder's first request after the restart extends the last one before it byte
 * for byte, model-sim reports it reusing ≥ 99 % of that request's prompt tokens, and each Turn
 * delivers one pick; with the Harness's data dir wiped too, also across an Orchestrator restart
 * (the history kept in its store, ADR-0176). The rebuilt history, streamed again after a
 * restart, keeps its transcript labels. Needs the built binaries.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunFeedEvent, TranscriptEntry, TranscriptRecord } from "@jr2/wire";
import { afterEach, describe, expect, it } from "vitest";
import {
  extendsPrevious,
  missingBinaries,
  type RecordedRequest,
  type Stack,
  startStack,
} from "../../../conformance/src/index.js";
import { reviewModels } from "./example-models.js";
import { orchestratorHttp } from "./stack-http.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../fixtures/plain-review/", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * Each answer waits 1.5 s for its first byte (model-sim's `latency`), so a kill lands while a
 * request is in flight: a kill between a pick's delivery and the Harness storing its receipt
 * (a few ms) loses that step — the known window ADR-0175 names.
 */
const CODER = "worker:1+latency:1500";
const REVIEWER = "script:request_changes,approve+latency:1500";
const models = (baseUrl: string) => ({
  coder: { ...reviewModels(baseUrl).coder, id: CODER },
  reviewer: { ...reviewModels(baseUrl).reviewer, id: REVIEWER },
});

describe.skipIf(missing.length > 0)("a continued conversation survives a Harness restart (issue 27)", () => {
  let stack: Stack | undefined;
  const dirs: string[] = [];
  const { http, events } = orchestratorHttp(() => stack as Stack);
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function start(harnessEnv: Record<string, string> = {}): Promise<string> {
    const data = mkdtempSync(join(tmpdir(), "jr2-restart-orch-"));
    const harnessData = mkdtempSync(join(tmpdir(), "jr2-restart-harness-"));
    dirs.push(data, harnessData);
    stack = await startStack("process", {
      repoRoot,
      workflowsDir,
      orchestratorEnv: { JR2_DATA_DIR: data },
      harnessEnv: { JR2_HARNESS_DATA_DIR: harnessData, ...harnessEnv },
      models,
    });
    return harnessData;
  }

  const coderRequests = async (): Promise<RecordedRequest[]> =>
    (await (stack as Stack).requests())
      .filter((r) => r.model === CODER && r.status === 200)
      .sort((a, b) => a.seq - b.seq);

  async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(25);
    }
  }

  /** Drives the run to its end (merging at the Gate); its feed. */
  async function toTheEnd(runId: string): Promise<RunFeedEvent[]> {
    await until(
      "the run's end",
      async () => {
        const { body } = await http(`/runs/${runId}`);
        if (body?.status !== "running") return body;
        for (const gate of (body.gates as Array<{ id: string; acceptsNow: string[] }>) ?? [])
          if (gate.acceptsNow.includes("merge"))
            await http(`/runs/${runId}/gates/${gate.id}/events`, {
              method: "POST",
              body: JSON.stringify({ type: "merge" }),
            });
        return undefined;
      },
      120_000,
    );
    expect((await http(`/runs/${runId}`)).body?.status).toBe("done");
    return events(runId);
  }

  /** The coder's first request after the restart extends the last before it; its cache reuse. */
  async function assertExtendsAcross(before: RecordedRequest): Promise<void> {
    const after = (await coderRequests()).find((r) => r.seq > before.seq);
    expect(after, "a coder request after the restart").toBeDefined();
    expect(extendsPrevious(before.raw, after!.raw)).toEqual({ ok: true });
    const lastPrompt = before.usage?.prompt_tokens ?? 0;
    const cached = after!.usage?.prompt_tokens_details?.cached_tokens ?? 0;
    expect(lastPrompt).toBeGreaterThan(0);
    expect(
      cached / lastPrompt,
      `cached ${cached} of the last request's ${lastPrompt} prompt tokens`,
    ).toBeGreaterThanOrEqual(0.99);
  }

  /** One pick per Turn: the Turns as uninterrupted, each ended by its pick, and no other pick. */
  async function onePickPerTurn(runId: string, feed: RunFeedEvent[]): Promise<void> {
    const turns = (await http(`/runs/${runId}/turns`)).body?.turns as Array<{
      state: string;
      outcome: string;
    }>;
    expect(turns.map((t) => t.state)).toEqual(["implement", "review", "fix", "review"]);
    expect(turns.map((t) => t.outcome)).toEqual(["picked", "picked", "picked", "picked"]);
    expect(feed.filter((e) => e.type === "pick")).toHaveLength(turns.length);
  }

  /**
   * The fix Turn (the coder's first after the restart) streams the rebuilt history again: each
   * replayed message keeps the label it had before (the implement Turn's prompt, its receipts
   * and tool results), none reads `other`.
   */
  async function assertRebuiltLabels(runId: string): Promise<void> {
    const turns = (await http(`/runs/${runId}/turns`)).body?.turns as Array<{
      turnId: string;
      state: string;
    }>;
    const [implement, fix] = ["implement", "fix"].map((state) => turns.find((t) => t.state === state)!);
    const messagesOf = async (turnId: string) =>
      (((await http(`/runs/${runId}/turns/${turnId}`)).body?.entries ?? []) as TranscriptRecord[])
        .map((r) => r.entry)
        .filter((e): e is Extract<TranscriptEntry, { kind: "message" }> => e.kind === "message");
    const before = await messagesOf(implement!.turnId);
    const after = await messagesOf(fix!.turnId);
    const label = (e: { role: string; part: string; text: string }) =>
      `${e.role}/${e.part}: ${e.text.slice(0, 60)}`;
    expect(after.filter((e) => e.part === "other").map(label)).toEqual([]);
    // The implement Turn's messages, replayed first, carry the very labels they had.
    expect(after.slice(0, before.length).map(label)).toEqual(before.map(label));
    expect(before.map((e) => e.part)).toContain("prompt");
    // The implement Turn's pick, whose receipt no request carried before the restart.
    expect(after.slice(before.length).map((e) => e.part)).toContain("receipt");
  }

  const startReview = async () => {
    const started = await http("/workflows/review/runs", {
      method: "POST",
      body: JSON.stringify({ input: { task: "a hello() function in hello.js" } }),
    });
    expect(started.status).toBe(201);
    return started.body?.runId as string;
  };

  it("SIGKILLed between the coder's two Turns: the fix Turn's request extends the implement Turn's last byte for byte", async () => {
    await start();
    const runId = await startReview();
    // The coder's implement Turn is over once the reviewer is asked; its answer is in flight.
    await until("the reviewer's first request", async () =>
      (await (stack as Stack).requests()).some((r) => r.model === REVIEWER) ? true : undefined,
    );
    const before = (await coderRequests()).at(-1) as RecordedRequest;
    await (stack as Stack).restartHarness();
    const feed = await toTheEnd(runId);
    await assertExtendsAcross(before);
    await onePickPerTurn(runId, feed);
    expect(feed.some((e) => e.type === "retry" && /admitted on a new one/.test(String(e.reason)))).toBe(
      false,
    );
    await assertRebuiltLabels(runId);
  }, 240_000);

  it("SIGKILLed mid-Submission: settled harness-restarted, re-admitted on the same conversation, one pick per Turn", async () => {
    await start();
    const runId = await startReview();
    // The coder's fix Turn has sent its first request (a Working-tool call follows it).
    const implementRequests = await until("the reviewer's first request", async () =>
      (await (stack as Stack).requests()).some((r) => r.model === REVIEWER)
        ? (await coderRequests()).length
        : undefined,
    );
    const before = await until("the fix Turn's first request", async () => {
      const all = await coderRequests();
      return all.length > implementRequests ? all.at(-1) : undefined;
    });
    await (stack as Stack).restartHarness();
    const feed = await toTheEnd(runId);
    await assertExtendsAcross(before);
    await onePickPerTurn(runId, feed);
    const retries = feed
      .filter((e) => e.type === "retry")
      .map((e) => String((e as { reason?: string }).reason));
    expect(retries.some((r) => /conversation lost/.test(r))).toBe(false);
    expect(
      retries.filter((r) => /the Harness restarted; the Turn is admitted again on its conversation/.test(r)),
    ).toHaveLength(1);
  }, 240_000);

  it("with the Harness's data dir wiped, the Orchestrator pushes the kept history: the fix Turn still extends the implement Turn's last request", async () => {
    const harnessData = await start();
    const runId = await startReview();
    await until("the reviewer's first request", async () =>
      (await (stack as Stack).requests()).some((r) => r.model === REVIEWER) ? true : undefined,
    );
    const before = (await coderRequests()).at(-1) as RecordedRequest;
    await (stack as Stack).killHarness();
    rmSync(harnessData, { recursive: true, force: true });
    await (stack as Stack).restartHarness();
    const feed = await toTheEnd(runId);
    await assertExtendsAcross(before);
    await onePickPerTurn(runId, feed);
    const lost = feed
      .filter((e) => e.type === "retry")
      .map((e) => e as { child?: string; reason?: string })
      .filter((e) => /admitted on a new one/.test(String(e.reason)));
    // The coder's conversation is rebuilt; the reviewer's first Submission had not ended, so no
    // history of it was kept: it alone starts over, and the feed says why.
    expect(lost.filter((e) => String(e.child).endsWith("#coder"))).toEqual([]);
    for (const e of lost) expect(e.reason).toContain("no byte-exact history kept of it");
    expect((stack as Stack).orchestratorLog()).toContain("admitting again with its kept history");
  }, 240_000);

  it("with the Orchestrator restarted and the Harness's data dir wiped, the stored history is pushed: the fix Turn still extends the implement Turn's last request", async () => {
    const harnessData = await start();
    const runId = await startReview();
    await until("the reviewer's first request", async () =>
      (await (stack as Stack).requests()).some((r) => r.model === REVIEWER) ? true : undefined,
    );
    const before = (await coderRequests()).at(-1) as RecordedRequest;
    // Both forget at once: the history lives only in the Orchestrator's store (ADR-0176).
    await (stack as Stack).killOrchestrator();
    await (stack as Stack).killHarness();
    rmSync(harnessData, { recursive: true, force: true });
    await (stack as Stack).restartHarness();
    await (stack as Stack).startOrchestrator();
    const feed = await toTheEnd(runId);
    await assertExtendsAcross(before);
    await onePickPerTurn(runId, feed);
    const lost = feed
      .filter((e) => e.type === "retry")
      .map((e) => e as { child?: string; reason?: string })
      .filter((e) => /admitted on a new one/.test(String(e.reason)));
    expect(lost.filter((e) => String(e.child).endsWith("#coder"))).toEqual([]);
    expect((stack as Stack).orchestratorLog()).toContain("admitting again with its kept history");
  }, 240_000);

  it("a conversation the TTL forgot is rebuilt from the store on its next Turn", async () => {
    // Forgotten after 1 s idle (swept each second), however few are held.
    await start({ JR2_CONVERSATION_TTL_MS: "1000", JR2_CONVERSATIONS_KEPT: "0" });
    const runId = await startReview();
    await until("the reviewer's first request", async () =>
      (await (stack as Stack).requests()).some((r) => r.model === REVIEWER) ? true : undefined,
    );
    const before = (await coderRequests()).at(-1) as RecordedRequest;
    const feed = await toTheEnd(runId);
    await assertExtendsAcross(before);
    await onePickPerTurn(runId, feed);
    expect((stack as Stack).harnessLog()).toContain("forgot idle settled conversations");
    expect((stack as Stack).harnessLog()).toContain("conversation rebuilt from the store");
  }, 240_000);
});
