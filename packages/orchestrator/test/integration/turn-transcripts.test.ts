/**
 * Issue 11 items 1 and 3 on the real stack (ADR-0257), the done-when: a `review` run
 * goes to its end; after the Orchestrator restarts (and, separately, the Harness) its event
 * log is every event of the first life with original `seq` and `at`, `GET /runs/:id/turns`
 * lists every Turn, and each Turn's transcript holds its prompt text, each pick's arguments as
 * the model wrote them and each receipt the model read — recorded from the Harness's stream,
 * served from the store. `jr2 transcript` prints it readably. Needs the built binaries.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { RunFeedEvent, TranscriptEntry, TurnList, TurnTranscript } from "@jr2/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, startStack } from "../../../conformance/src/index.js";
import { reviewModels } from "./example-models.js";
import { orchestratorHttp } from "./stack-http.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../fixtures/plain-review/", import.meta.url));
const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Each Turn's prompt as `review` writes it, by Agent and state. */
const PROMPTS: Record<string, string> = {
  implement: "Implement a hello() function in hello.js.",
  review: "Review the change in the working directory.",
  fix: "Address the review comments.",
};

describe.skipIf(missing.length > 0)("Turn transcripts on the real stack (issue 11 item 3)", () => {
  let stack: Stack;
  let dataDir: string;

  const { http, events } = orchestratorHttp(() => stack);
  /** Every Turn and its transcript, as served now. */
  async function history(runId: string): Promise<{ list: TurnList; transcripts: TurnTranscript[] }> {
    const list = (await http(`/runs/${runId}/turns`)).body as TurnList;
    const transcripts: TurnTranscript[] = [];
    for (const t of list.turns)
      transcripts.push((await http(`/runs/${runId}/turns/${t.turnId}`)).body as TurnTranscript);
    return { list, transcripts };
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "jr2-transcripts-"));
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

  it("keeps every event, every Turn and each Turn's prompt, picks and receipts across restarts of either service", async () => {
    const started = await http("/workflows/review/runs", {
      method: "POST",
      body: JSON.stringify({ input: { task: "a hello() function in hello.js" } }),
    });
    expect(started.status).toBe(201);
    const runId = started.body?.runId as string;
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { body } = await http(`/runs/${runId}`);
      if (body?.status !== "running") break;
      for (const gate of (body.gates as Array<{ id: string; acceptsNow: string[] }>) ?? [])
        if (gate.acceptsNow.includes("merge"))
          await http(`/runs/${runId}/gates/${gate.id}/events`, {
            method: "POST",
            body: JSON.stringify({ type: "merge" }),
          });
      if (Date.now() > deadline) throw new Error(`run ${runId} did not end: ${JSON.stringify(body)}`);
      await sleep(50);
    }
    // The last Turn's usage and transcript follow the pick that ended the run: wait until still.
    let firstLife: RunFeedEvent[] = [];
    let first = await history(runId);
    for (let stable = 0; stable < 8; ) {
      const now = await events(runId);
      const h = await history(runId);
      stable =
        now.length === firstLife.length && JSON.stringify(h) === JSON.stringify(first) ? stable + 1 : 0;
      firstLife = now;
      first = h;
      await sleep(150);
    }

    // Every Turn the log admitted is listed, in start order, each ended with its outcome.
    const admitted = firstLife.filter((e) => e.type === "admission" && e.kind === "task").length;
    expect(first.list.turns.length).toBeGreaterThanOrEqual(3);
    expect(first.list.turns.length).toBe(admitted);
    expect(first.list.turns.map((t) => t.state)).toEqual(["implement", "review", "fix", "review"]);
    for (const t of first.list.turns) {
      expect(t.endedAt, `Turn ${t.turnId} ended`).not.toBeNull();
      expect(t.outcome).toBe("picked");
      expect(t.usage.requests).toBeGreaterThan(0);
    }
    const runUsage = (await http(`/runs/${runId}`)).body?.usage;
    expect(first.list.turns.reduce((n, t) => n + (t.usage.requests ?? 0), 0)).toBe(runUsage.requests);

    for (const [i, t] of first.transcripts.entries()) {
      const turn = first.list.turns[i]!;
      const entries = t.entries.map((r) => r.entry);
      const messages = entries.filter(
        (e): e is Extract<TranscriptEntry, { kind: "message" }> => e.kind === "message",
      );
      const answers = entries.filter(
        (e): e is Extract<TranscriptEntry, { kind: "answer" }> => e.kind === "answer",
      );
      // Its prompt text, with the system prompt and tools as sent.
      const prompt = messages.find((m) => m.part === "prompt");
      expect(prompt?.text, `Turn ${i} (${turn.state}) prompt`).toContain(PROMPTS[turn.state]!);
      expect(t.prefix?.system).toContain(
        turn.agent === "coder" ? "You implement changes" : "You review the diff",
      );
      // The pick that ended it, with its arguments as delivered (the feed's pick line).
      const delivered = firstLife.filter(
        (e): e is Extract<RunFeedEvent, { type: "pick" }> => e.type === "pick" && e.name === turn.pick?.name,
      );
      expect(turn.pick, `Turn ${i} pick`).not.toBeNull();
      expect(delivered.map((e) => JSON.stringify(e.arguments ?? {}))).toContain(
        JSON.stringify(turn.pick?.arguments),
      );
      // The answer that ended it is in it (streamed after the abort's settlement, ADR-0159),
      // its pick call carrying the arguments as the model wrote them.
      const ending = answers
        .at(-1)
        ?.toolCalls.find((c) => c.disposition === "pick" && c.name === turn.pick?.name);
      expect(ending, `Turn ${i} (${turn.state}): its ending answer with ${turn.pick?.name}`).toBeDefined();
      expect(JSON.parse(ending!.rawArguments)).toEqual(turn.pick?.arguments);
      // Each receipt the model read: a pick answered inside the Turn, in the Turn; the pick that
      // ended the previous Turn of its conversation, at the start of this one (ADR-0159).
      const receipts = messages.filter((m) => m.part === "receipt");
      const earlier = first.list.turns.slice(0, i).some((t) => t.agent === turn.agent);
      expect(receipts.length, `Turn ${i} receipts`).toBeGreaterThanOrEqual(earlier ? 1 : 0);
      const read = answers.slice(0, -1).flatMap((a) => a.toolCalls.filter((c) => c.disposition === "pick"));
      for (const call of read)
        expect(
          receipts.map((m) => m.toolCallId),
          `receipt of ${call.name} in Turn ${i}`,
        ).toContain(call.id);
    }
    // A restart of the Orchestrator, then of the Harness: nothing lost, nothing doubled.
    await stack.killOrchestrator();
    await stack.startOrchestrator();
    expect(await events(runId)).toEqual(firstLife);
    expect(await history(runId)).toEqual(first);
    await stack.killHarness();
    await stack.restartHarness();
    await sleep(500);
    expect(await events(runId)).toEqual(firstLife);
    expect(await history(runId)).toEqual(first);

    // `jr2 transcript` reads it for a person; --json is the answers raw.
    const env = { ...process.env, JR2_URL: stack.orchestratorUrl, JR2_INSTANCE_TOKEN: stack.instanceToken };
    const text = (
      await promisify(execFile)("node", [cli, "transcript", runId, "--agent", "reviewer"], { env })
    ).stdout;
    expect(text).toContain("Review the change in the working directory.");
    expect(text).toContain("user · prompt");
    expect(text).toMatch(/^system:\n {4}You review the diff/m);
    expect(text).toMatch(/^tools: read, grep, find, ls, approve, request_changes/m);
    const json = JSON.parse(
      (await promisify(execFile)("node", [cli, "transcript", runId, "--json"], { env })).stdout,
    ) as TurnTranscript[];
    expect(json).toEqual(first.transcripts);
    writeFileSync(join(tmpdir(), "jr2-transcript-example.txt"), text);
  }, 240_000);
});
