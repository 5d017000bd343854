/**
 * Regression (issue 16 item 2, "Memory bar"): a Gate that waits over a weekend cost the coder its
 * conversation. Root cause: the TTL (24 h, ADR-0154) forgot every idle settled conversation, and
 * a run between Turns — waiting at a Gate — touches none of its conversations, so its next Turn
 * found 404 and started over with `conversation-new`. Fixed (ADR-0261): the `kept` most recently
 * touched conversations (`JR2_CONVERSATIONS_KEPT`, default 200) are never forgotten for idleness;
 * past them the TTL forgets the least recently touched idle ones first. No field case (C1–C8).
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

const WEEKEND_MS = 72 * 3600 * 1000;

describe("a conversation idle over a weekend (its run waits at a Gate)", () => {
  it("is kept with the default settings, and its next Turn continues it", async () => {
    const h = harnessFor(model, orch);
    model.script([{ text: "done" }, { text: "done again" }]);
    await h.run("r1/coder");
    expect(h.app.conversations.sweep(Date.now() + WEEKEND_MS)).toEqual([]);
    const next = await h.run("r1/coder", { kept: true, prompt: "Fix what the reviewer said." });
    expect(next.settlement.submissionId).toBeTruthy();
    const history = await h.app.inject({
      method: "GET",
      url: "/conversations/r1%2Fcoder/history",
      headers: auth,
    });
    expect(history.statusCode).toBe(200);
    expect(history.json().settlements).toHaveLength(2);
    await h.app.close();
  });

  it("past `kept` conversations, the least recently touched idle ones are forgotten first", async () => {
    const h = harnessFor(model, orch, { conversationTtlMs: 60_000, conversationsKept: 3 });
    model.script(Array.from({ length: 5 }, () => ({ text: "done" })));
    for (const iid of ["r1/coder", "r2/a", "r3/b"]) await h.run(iid);
    expect(h.app.conversations.sweep(Date.now() + WEEKEND_MS)).toEqual([]);
    for (const iid of ["r4/c", "r5/d"]) await h.run(iid);
    expect(h.app.conversations.sweep(Date.now() + WEEKEND_MS)).toEqual(["r1/coder", "r2/a"]);
    expect(h.app.conversations.size).toBe(3);
    // Forgotten from memory only: the store rebuilds it on its next Turn (ADR-0175).
    expect((await h.admit("r1/coder", { kept: true })).statusCode).toBe(200);
    expect((await h.admit("r3/b", { kept: true })).statusCode).toBe(200);
    await h.app.conversations.idle();
    await h.app.close();
  });
});
