/**
 * The main job (issue 5): the plain review loop (`review.ts` of
 * packages/orchestrator/test/fixtures/plain-review, what the example was before it moved onto a
 * Repo Slot, ADR-0228) end to end against model-sim, with the
 * real Orchestrator and Harness — coder implements, reviewer requests changes, the coder
 * continues the same conversation in `fix`, the reviewer approves, the Gate is answered, the
 * run settles `done`. Asserted on model-sim's byte-exact recording, not on printed text.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  conversationOf,
  extendsPrevious,
  missingBinaries,
  type RecordedRequest,
  type Stack,
  sameToolsBlock,
  startStack,
  targetFromEnv,
} from "../src/index.js";
import { newestUserText, orchestratorClient, runView, until } from "./support.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const workflowsDir = fileURLToPath(
  new URL("../../orchestrator/test/fixtures/plain-review/", import.meta.url),
);
const target = targetFromEnv();
const missing = missingBinaries(repoRoot, target);

const CODER = "worker:1";
const REVIEWER = "script:request_changes,approve";

describe.skipIf(missing.length > 0)(`the review workflow end to end (${target})`, () => {
  let stack: Stack;
  let runId: string;
  let recordings: RecordedRequest[];
  let feed: Array<Record<string, unknown>>;

  beforeAll(async () => {
    stack = await startStack(target, {
      repoRoot,
      workflowsDir,
      models: (baseUrl) => ({
        coder: { baseUrl, id: CODER, contextWindow: 32768, maxTokens: 1024 },
        reviewer: { baseUrl, id: REVIEWER, contextWindow: 32768, maxTokens: 1024 },
        triager: { baseUrl, id: "obedient", contextWindow: 32768, maxTokens: 1024 },
      }),
    });
    const client = orchestratorClient(stack);
    runId = await client.startRun("review", { task: "a hello() function in hello.js" });
    const gate = await until("the merge Gate to open", async () => {
      const view = await runView(client, runId);
      if (view.status !== "running")
        throw new Error(`run settled ${view.status} before the Gate: ${JSON.stringify(view.value)}`);
      return view.gates.find((g) => g.id === "merge_gate");
    });
    expect(gate.acceptsNow).toContain("merge");
    const sent = await client.gateSend(runId, "merge_gate", { type: "merge" });
    expect(sent.status).toBe(200);
    await until("the run to settle", async () =>
      (await runView(client, runId)).status === "running" ? undefined : true,
    );
    recordings = (await stack.requests()).filter((r) => r.status === 200);
    feed = (await client.feed(runId)) as Array<Record<string, unknown>>;
  });

  afterAll(async () => {
    await stack?.close();
  });

  it("settles done after the reviewer approves and the Gate is answered", async () => {
    const view = await runView(orchestratorClient(stack), runId);
    expect(view.status).toBe("done");
    expect(view.value).toBe("done");
  });

  it("continues the coder's conversation in fix: same tools bytes, byte-for-byte extension, the new Allowed picks, cache hits", () => {
    const coder = recordings.filter((r) => r.model === CODER).sort((a, b) => a.seq - b.seq);
    const fixAt = coder.findIndex((r) => newestUserText(r.raw).includes("Address the review comments."));
    expect(fixAt, "a coder request for the fix Turn").toBeGreaterThan(0);
    const implement = coder[0]!;
    const fix = coder[fixAt]!;
    expect(newestUserText(implement.raw)).toContain("Allowed now: finish.");
    expect(newestUserText(fix.raw)).toContain("Allowed now: dispute, finish.");
    expect(sameToolsBlock(implement.raw, fix.raw)).toEqual({ ok: true });
    expect(extendsPrevious(coder[fixAt - 1]!.raw, fix.raw)).toEqual({ ok: true });
    expect(fix.usage?.prompt_tokens_details?.cached_tokens ?? 0).toBeGreaterThan(0);
  });

  it("runs the coder's Working tools in its run's sandbox (issue 26): the banner names bwrap, the tool's result reached the model", () => {
    // A broken sandbox would have refused the coder's Turn; the banner says which layer (ADR-0173).
    expect(stack.harnessLog()).toMatch(/jr2 harness sandbox: bwrap \S+, sandbox uid \d+/);
    const tools = feed.filter((e) => e.type === "tool-call" && e.disposition === "working");
    expect(tools.length).toBeGreaterThan(0);
    const coder = recordings.filter((r) => r.model === CODER).sort((a, b) => a.seq - b.seq);
    const results = coder.flatMap((r) =>
      (JSON.parse(r.raw) as { messages: Array<{ role: string; content: unknown }> }).messages
        .filter((m) => m.role === "tool")
        .map((m) => JSON.stringify(m.content)),
    );
    expect(results.length).toBeGreaterThan(0);
    for (const text of results) expect(text).not.toMatch(/JR2_ERR_SANDBOX|refused/);
  });

  it("drives the reviewer down the scripted path: request_changes, then approve", () => {
    const picks = feed.filter((e) => e.type === "pick" && e.agent === "reviewer").map((e) => e.name);
    expect(picks).toEqual(["request_changes", "approve"]);
  });

  it("reports usage on the feed and the run that sums to what model-sim reported", async () => {
    type Totals = { prompt: number; cached: number; completion: number };
    const sim = recordings.reduce<Totals>(
      (t, r) => {
        const u = r.usage as {
          prompt_tokens?: number;
          completion_tokens?: number;
          prompt_tokens_details?: { cached_tokens?: number };
        } | null;
        return {
          prompt: t.prompt + (u?.prompt_tokens ?? 0),
          cached: t.cached + (u?.prompt_tokens_details?.cached_tokens ?? 0),
          completion: t.completion + (u?.completion_tokens ?? 0),
        };
      },
      { prompt: 0, cached: 0, completion: 0 },
    );
    const usage = feed.filter((e) => e.type === "usage");
    const fromFeed = usage.reduce<Totals>(
      (t, e) => ({
        prompt: t.prompt + Number(e.promptTokens),
        cached: t.cached + Number(e.cachedTokens),
        completion: t.completion + Number(e.completionTokens),
      }),
      { prompt: 0, cached: 0, completion: 0 },
    );
    expect(usage).toHaveLength(recordings.length);
    expect(fromFeed).toEqual(sim);
    const detail = JSON.parse((await orchestratorClient(stack).run(runId)).body) as {
      usage: Record<string, number>;
    };
    // model-sim reports every field, so every total is known and the cache base is all of it.
    expect(detail.usage).toEqual({
      promptTokens: sim.prompt,
      cachedTokens: sim.cached,
      completionTokens: sim.completion,
      requests: recordings.length,
      unreportedRequests: 0,
      reported: { promptTokens: sim.prompt, cachedTokens: sim.cached },
    });
  });

  it("keeps the Allowed picks out of the cached prefix: the tools block never names them, the system prompt never changes", () => {
    for (const model of [CODER, REVIEWER]) {
      const bodies = conversationOf(recordings, model).map(
        (raw) => JSON.parse(raw) as { tools?: unknown; messages: Array<{ role: string; content: unknown }> },
      );
      expect(bodies.length).toBeGreaterThanOrEqual(2);
      const systems = new Set(
        bodies.map((b) => JSON.stringify(b.messages.filter((m) => m.role === "system"))),
      );
      expect(systems.size, `${model}: one system prompt for the whole conversation`).toBe(1);
      for (const b of bodies) expect(JSON.stringify(b.tools ?? [])).not.toContain("Allowed now");
    }
  });
});
