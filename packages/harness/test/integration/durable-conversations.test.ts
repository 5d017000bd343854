import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openHarnessStore } from "../../src/conversations/store/sqlite-harness-store.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fixtures/fake-openai.js";
import { answer, type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";
import { auth, harnessFor } from "../fixtures/harness.js";

/**
 * Issue 27 at the Harness's wire (ADR-0175): a conversation outlives its Harness process — the
 * next Submission's request extends the last one before, byte for byte; it is rebuilt after the
 * TTL forgot it and from a history the Orchestrator pushes; a Submission that ran at a restart
 * settles `failed { type: "harness-restarted" }`.
 */

let model: FakeOpenAI;
let orch: FakeOrchestrator;
let dir: string;
beforeEach(async () => {
  model = await startFakeOpenAI();
  orch = await startFakeOrchestrator();
  dir = mkdtempSync(join(tmpdir(), "jr2-harness-data-"));
  orch.answer = () => answer({ allowed: [], turnComplete: true });
});
afterEach(async () => {
  await model.close();
  await orch.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (name: string, args: unknown = {}) => ({ name, arguments: JSON.stringify(args) });
const IID = "run1/review/coder";

/** The second body's messages begin with every message of the first, byte for byte. */
function extendsBytes(before: string, after: string): void {
  const a = JSON.parse(before) as { messages: unknown[]; tools: unknown };
  const b = JSON.parse(after) as { messages: unknown[]; tools: unknown };
  expect(JSON.stringify(b.tools)).toBe(JSON.stringify(a.tools));
  const prefix = JSON.stringify(a.messages).slice(0, -1);
  expect(JSON.stringify(b.messages).startsWith(prefix)).toBe(true);
  expect(b.messages.length).toBeGreaterThan(a.messages.length);
}

/** One Submission of the coder's conversation that picks `approve`. */
async function firstLife(dataDir: string) {
  const h = harnessFor(model, orch, { dataDir });
  model.script([{ toolCalls: [call("approve", { summary: "first" })] }]);
  const first = await h.run(IID);
  expect(first.settlement.outcome).toBe("completed");
  await h.app.close();
  return model.bodies.at(-1) as string;
}

describe("a conversation outlives its Harness process", () => {
  it("a restarted Harness on the same data dir extends the last request byte for byte", async () => {
    const before = await firstLife(dir);
    const h = harnessFor(model, orch, { dataDir: dir });
    model.script([{ toolCalls: [call("approve", { summary: "second" })] }]);
    const second = await h.run(IID, { kept: true, prompt: "Fix the review's findings." });
    expect(second.settlement.outcome).toBe("completed");
    extendsBytes(before, model.bodies.at(-1) as string);
    await h.app.close();
  });

  it("a Harness without a data dir has lost it: kept answers 404 saying why", async () => {
    await firstLife(":memory:");
    const h = harnessFor(model, orch);
    const res = await h.admit(IID, { kept: true });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({
      code: "JR2_ERR_CONVERSATION_NOT_REBUILT",
      error: expect.stringContaining("pushed no history"),
    });
    await h.app.close();
  });

  it("a pushed history rebuilds a conversation the Harness lost; a tampered one is refused", async () => {
    const before = await firstLife(dir);
    const store = openHarnessStore(dir);
    const history = store.history(IID);
    store.close();
    expect(history?.submissions).toHaveLength(1);
    const h = harnessFor(model, orch);
    const tampered = structuredClone(history)!;
    tampered.submissions[0]!.messages = tampered.submissions[0]!.messages.replace("Review", "Revue");
    const refused = await h.admit(IID, { kept: true, history: tampered });
    expect(refused.statusCode).toBe(404);
    expect(refused.json().error).toContain("sha256 does not match");
    model.script([{ toolCalls: [call("approve", { summary: "second" })] }]);
    const second = await h.run(IID, { kept: true, history });
    expect(second.settlement.outcome).toBe("completed");
    extendsBytes(before, model.bodies.at(-1) as string);
    await h.app.close();
  });

  it("a conversation the TTL forgot is rebuilt on its next Submission", async () => {
    const h = harnessFor(model, orch, { dataDir: dir, conversationTtlMs: 1, conversationsKept: 0 });
    model.script([{ toolCalls: [call("approve", { summary: "first" })] }]);
    await h.run(IID);
    const before = model.bodies.at(-1) as string;
    await h.app.conversations.idle();
    expect(h.app.conversations.sweep(Date.now() + 1000)).toEqual([IID]);
    expect(h.app.conversations.size).toBe(0);
    model.script([{ toolCalls: [call("approve", { summary: "second" })] }]);
    const second = await h.run(IID, { kept: true });
    expect(second.settlement.outcome).toBe("completed");
    extendsBytes(before, model.bodies.at(-1) as string);
    await h.app.close();
  });

  it("a Submission that ran at the restart settles failed harness-restarted at once; the stream keeps its offsets", async () => {
    const store = openHarnessStore(dir);
    store.create(IID, Date.now());
    store.appendEvent(IID, 0, { type: "submission-started", submissionId: "s-cut", kind: "task" });
    store.admit(IID, "s-cut", Date.now());
    store.close();
    const h = harnessFor(model, orch, { dataDir: dir });
    const res = await h.app.inject({
      method: "GET",
      url: `/conversations/${encodeURIComponent(IID)}/stream?offset=1&wait=0`,
      headers: auth,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      events: [
        {
          type: "submission-settled",
          submissionId: "s-cut",
          outcome: "failed",
          error: { type: "harness-restarted", message: expect.stringContaining("restarted") },
        },
      ],
      nextOffset: "2",
    });
    await h.app.close();
  });

  it("a working directory holding the data dir is refused", async () => {
    const h = harnessFor(model, orch, { dataDir: join(dir, "harness") });
    const res = await h.admit("run1/x/coder", {
      cwd: dir,
      definition: { model: "sim", instructions: "", workspace: "write" },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "JR2_ERR_CWD_INVALID" });
    await h.app.close();
  });
});
