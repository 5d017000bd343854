import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../fixtures/fake-openai.js";
import { answer, type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";
import { auth, harnessFor, parsed } from "../fixtures/harness.js";

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
const call = (name: string, args: unknown = {}) => ({ name, arguments: JSON.stringify(args) });
const RESTATED = "The workflow's state changed since you last read the Allowed picks.";

describe("restatement at a step boundary (§7.5)", () => {
  it("exactly one restatement per change, right after the last tool result; none after turnComplete", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "jr2-h-"));
    const h = harnessFor(model, orch);
    let picks = 0;
    orch.answer = () => {
      picks++;
      orch.allowed = ["finish"]; // the next Turn already registered the address (continue: true)
      return answer({ allowed: [], turnComplete: true });
    };
    model.script([
      { toolCalls: [call("ls", {})] },
      { toolCalls: [call("ls", {})] },
      { toolCalls: [call("approve", { summary: "ok" })] },
    ]);
    // The Gate answers while the model lists files: the surface changes under it after read 1.
    orch.onSurfaceRead = (n) => {
      if (n === 2) orch.allowed = ["approve"];
    };
    const first = h.admit("r1/coder", {
      definition: { model: "sim", instructions: "i", workspace: "read" },
      cwd,
    });
    const a = (await first).json() as { submissionId: string; offset: string };
    const { settlement } = await h.settled("r1/coder", a.submissionId, a.offset);
    expect(settlement.outcome).toBe("completed");
    expect(picks).toBe(1);
    expect(model.bodies).toHaveLength(3);
    const last = parsed(model)[2]!.messages;
    const restated = last.filter((m) => JSON.stringify(m.content ?? "").includes(RESTATED));
    expect(restated).toHaveLength(1);
    const at = last.indexOf(restated[0]!);
    expect(last[at - 1]!.role).toBe("tool");
    expect(JSON.stringify(restated[0]!.content)).toContain("Allowed now: approve.");
    // No read after the Turn ended: initial read + two boundaries.
    expect(orch.surfaceReads).toBe(3);
    const user0 = JSON.stringify(parsed(model)[0]!.messages[1]!.content);
    expect(user0).toContain(`Working directory: ${cwd}`);
  });
});

describe("the tools block (§3.3, §7.2)", () => {
  it("is byte-identical across two Submissions whose Allowed picks differ, and across two Harness processes", async () => {
    const h1 = harnessFor(model, orch);
    orch.answer = () => answer({ allowed: [], turnComplete: true });
    model.script([{ text: "thinking" }]);
    await h1.run("r1/coder/x");
    orch.allowed = ["finish"];
    model.script([{ text: "still thinking" }]);
    await h1.run("r1/coder/x", { kind: "nudge", kept: true, prompt: undefined });
    const h2 = harnessFor(model, orch);
    model.script([{ text: "other" }]);
    await h2.run("r1/coder/y");
    const [a, b, c] = parsed(model);
    expect(JSON.stringify(b!.tools)).toBe(JSON.stringify(a!.tools));
    expect(JSON.stringify(c!.tools)).toBe(JSON.stringify(a!.tools));
    expect(JSON.stringify(c!.messages[0])).toBe(JSON.stringify(a!.messages[0]));
    // The nudge extends the previous request byte for byte, and says the nudge text (C1, C5).
    const prev = JSON.stringify(a!.messages).slice(0, -1);
    expect(JSON.stringify(b!.messages).startsWith(prev)).toBe(true);
    expect(JSON.stringify(b!.messages.at(-1)!.content)).toContain(
      "Your previous turn ended, and the workflow is still waiting for your pick.\\n\\n<jr2-turn>\\nAllowed now: finish.",
    );
  });
});

describe("C1 and C5: a model that stops without a structured pick", () => {
  it("C1: a tool call written as text delivers nothing and settles completed", async () => {
    const h = harnessFor(model, orch);
    model.script([
      { text: 'Approving. <tool_call>{"name": "approve", "arguments": {"summary": "ok"}}</tool_call>' },
    ]);
    const { settlement } = await h.run("r1/coder/c1");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks).toHaveLength(0);
    expect(model.bodies).toHaveLength(1);
  });

  it("C5: plain text and stop settles completed with no pick and no restatement", async () => {
    const h = harnessFor(model, orch);
    model.script([{ text: "I have finished the review." }]);
    const { settlement, events } = await h.run("r1/coder/c5");
    expect(settlement.outcome).toBe("completed");
    expect(events.some((e) => e.type === "pick")).toBe(false);
    expect(model.bodies).toHaveLength(1);
  });
});

describe("the queue and abort (§7.1)", () => {
  it("runs two Submissions of one conversation in admission order", async () => {
    const h = harnessFor(model, orch);
    model.script([{ text: "first" }, { text: "second" }]);
    const a = (await h.admit("r1/q", { prompt: "one" })).json() as { submissionId: string };
    const b = (await h.admit("r1/q", { prompt: "two", kept: true })).json() as { submissionId: string };
    const { events } = await h.settled("r1/q", b.submissionId);
    const order = events
      .filter((e) => e.type === "submission-started" || e.type === "submission-settled")
      .map((e) => `${e.type}:${e.submissionId}`);
    expect(order).toEqual([
      `submission-started:${a.submissionId}`,
      `submission-settled:${a.submissionId}`,
      `submission-started:${b.submissionId}`,
      `submission-settled:${b.submissionId}`,
    ]);
  });

  it("abort settles the running and every queued Submission aborted, in admission order", async () => {
    const h = harnessFor(model, orch);
    orch.live = false; // keeps nothing running long; use a slow surface instead
    orch.live = true;
    const a = (await h.admit("r1/ab", {})).json() as { submissionId: string };
    const b = (await h.admit("r1/ab", { kept: true })).json() as { submissionId: string };
    const c = (await h.admit("r1/ab", { kept: true })).json() as { submissionId: string };
    const res = await h.app.inject({ method: "POST", url: "/conversations/r1%2Fab/abort", headers: auth });
    expect(res.json()).toEqual({ aborted: true });
    const { events } = await h.settled("r1/ab", c.submissionId);
    const settled = events.filter((e) => e.type === "submission-settled");
    expect(settled.map((e) => [e.submissionId, e.type === "submission-settled" && e.outcome])).toEqual([
      [a.submissionId, "aborted"],
      [b.submissionId, "aborted"],
      [c.submissionId, "aborted"],
    ]);
    const none = await h.app.inject({ method: "POST", url: "/conversations/unknown/abort", headers: auth });
    expect(none.statusCode).toBe(200);
    expect(none.json()).toEqual({ aborted: false });
  });
});

describe("wire input", () => {
  it("401 before 404; kept on an unknown conversation is 404 and seats nothing", async () => {
    const h = harnessFor(model, orch);
    const noAuth = await h.app.inject({ method: "GET", url: "/conversations/nope/history" });
    expect(noAuth.statusCode).toBe(401);
    const bad = await h.app.inject({
      method: "GET",
      url: "/conversations/nope/history",
      headers: { authorization: "Bearer x" },
    });
    expect(bad.statusCode).toBe(401);
    const kept = await h.admit("r1/kept", { kept: true });
    expect(kept.statusCode).toBe(404);
    // No store row and no pushed history: it cannot be rebuilt, and the answer says why (ADR-0175).
    expect(kept.json().code).toBe("JR2_ERR_CONVERSATION_NOT_REBUILT");
    const hist = await h.app.inject({
      method: "GET",
      url: "/conversations/r1%2Fkept/history",
      headers: auth,
    });
    expect(hist.statusCode).toBe(404);
  });

  it("a malformed body, a relative cwd, an unknown model → 400 naming the field", async () => {
    const h = harnessFor(model, orch);
    const noPrompt = await h.admit("r1/b", { prompt: undefined });
    expect(noPrompt.statusCode).toBe(400);
    expect(noPrompt.json()).toMatchObject({ code: "JR2_ERR_SUBMISSION_INVALID", field: "prompt" });
    const cwd = await h.admit("r1/b", { cwd: "work/here" });
    expect(cwd.statusCode).toBe(400);
    expect(cwd.json()).toMatchObject({ code: "JR2_ERR_CWD_NOT_ABSOLUTE", field: "cwd" });
    const unknown = await h.admit("r1/b", { model: "gpt-nope" });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ code: "JR2_ERR_MODEL_UNKNOWN", field: "model" });
    const kind = await h.admit("r1/b", { kind: "chat" });
    expect(kind.json()).toMatchObject({ code: "JR2_ERR_SUBMISSION_INVALID", field: "kind" });
  });
});
