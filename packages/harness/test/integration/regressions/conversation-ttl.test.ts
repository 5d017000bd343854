/**
 * Regression: conversations were never forgotten (2000 aborted admissions with 20 KB prompts
 * grew RSS 120 → 181 MB). Root cause: the store kept every conversation for the process's
 * life. Fixed: a settled conversation idle for `JR2_CONVERSATION_TTL_MS` (default 24 h) is
 * forgotten and answers 404 — the Orchestrator already reads that as a lost conversation
 * (§5.3). A conversation with a Submission running or queued is never forgotten.
 * Since ADR-0175 the TTL only frees memory: the store keeps the conversation and rebuilds it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../fixtures/fake-openai.js";
import { type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { auth, harnessFor } from "../../fixtures/harness.js";

let model: FakeOpenAI;
let orch: FakeOrchestrator;
beforeEach(async () => {
  model = await startFakeOpenAI();
  orch = await startFakeOrchestrator();
});
afterEach(async () => {
  await model.close();
  await orch.close();
});

const TTL = 60_000;

describe("idle settled conversations", () => {
  it("leave memory after the TTL and are rebuilt from the store when touched again; earlier, and while running, they are kept", async () => {
    // A second conversation's Submission waits for its surface until released.
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const fetch: typeof globalThis.fetch = async (url, init) => {
      if (String(url).includes("r1%2Fbusy")) await held;
      return globalThis.fetch(url, init);
    };
    const h = harnessFor(model, orch, { conversationTtlMs: TTL, conversationsKept: 0, fetch });
    model.script([{ text: "done" }]);
    await h.run("r1/idle");
    expect(h.app.conversations.sweep(Date.now())).toEqual([]);
    expect((await h.admit("r1/busy", {})).statusCode).toBe(200);

    const forgotten = h.app.conversations.sweep(Date.now() + TTL);
    expect(forgotten).toEqual(["r1/idle"]);
    expect(h.app.conversations.size).toBe(1);
    // The store keeps it (ADR-0175): a read or a kept admission rebuilds it, its history whole.
    const history = await h.app.inject({
      method: "GET",
      url: "/conversations/r1%2Fidle/history",
      headers: auth,
    });
    expect(history.statusCode).toBe(200);
    expect(history.json().settlements).toHaveLength(1);
    expect(history.json().messages.length).toBeGreaterThan(0);
    expect(h.app.conversations.size).toBe(2);
    expect(h.app.conversations.get("r1/busy")).toBeDefined();
    release();
    await h.app.conversations.idle();
    await h.app.close();
  });

  it("a TTL of 0 keeps every conversation", async () => {
    const h = harnessFor(model, orch, { conversationTtlMs: 0 });
    model.script([{ text: "done" }]);
    await h.run("r1/keep");
    expect(h.app.conversations.sweep(Date.now() + 365 * 24 * 3600 * 1000)).toEqual([]);
    expect(h.app.conversations.get("r1/keep")).toBeDefined();
    await h.app.close();
  });
});
