import { describe, expect, it } from "vitest";
import type { FakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { auth } from "../../fixtures/harness.js";
import {
  answer,
  freePort,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../fixtures/scripted-upstream.js";
import { upstreamHarness } from "../../fixtures/upstream-harness.js";
import { approve, retries, upstreamPerTest } from "../../fixtures/upstream-per-test.js";

let upstream: ScriptedUpstream;
let orch: FakeOrchestrator;
upstreamPerTest((pair) => ({ upstream, orch } = pair));

describe("mid-stream failures are retried with the same bytes", () => {
  it('finish_reason "abort" (vLLM engine abort, hand-written): retried, identical bytes, then the answer; the partial text is never delivered', async () => {
    const h = upstreamHarness(upstream, orch);
    upstream.script([
      { sse: answer({ content: "PARTIAL", finish: "abort", usage: null }) },
      { sse: answer(approve) },
    ]);
    const { events, settlement } = await h.run("r1/coder/abort", { turnId: "t-1" });
    expect(settlement.outcome).toBe("completed");
    expect(upstream.bodies).toHaveLength(2);
    expect(upstream.bodies[1]).toBe(upstream.bodies[0]);
    expect(retries(events)).toEqual([
      expect.objectContaining({ attempt: 1, cause: "stream-cut", model: "sim", waitMs: expect.any(Number) }),
    ]);
    expect(retries(events)[0]!.message).toMatch(/finish_reason "abort"/);
    // Only the transcript's record of the retried attempt (replayed: false, ADR-0159) holds it.
    const unseen = (e: (typeof events)[number]) =>
      e.type === "transcript" && e.entry.kind === "answer" && !e.entry.replayed;
    expect(events.filter(unseen)).toEqual([
      expect.objectContaining({ entry: expect.objectContaining({ text: "PARTIAL", attempt: 1 }) }),
    ]);
    expect(JSON.stringify(events.filter((e) => !unseen(e)))).not.toContain("PARTIAL");
    expect(orch.picks.map((p) => p.name)).toEqual(["approve"]);
    expect(h.warns().find((l) => l.msg === "model request retried")).toMatchObject({
      iid: "r1/coder/abort",
      turnId: "t-1",
      model: "sim",
      cause: "stream-cut",
    });
  });

  it("a socket cut after the first bytes: retried with identical bytes; the partial call is never executed", async () => {
    const h = upstreamHarness(upstream, orch);
    upstream.script([
      {
        sse: answer({ toolCalls: [{ name: "approve", arguments: '{"summary":"o' }], finish: null }),
        end: "cut",
      },
      { sse: answer(approve) },
    ]);
    const { events, settlement } = await h.run("r1/coder/cut");
    expect(settlement.outcome).toBe("completed");
    expect(upstream.bodies[1]).toBe(upstream.bodies[0]);
    expect(retries(events)).toMatchObject([{ attempt: 1, cause: "stream-cut" }]);
    expect(orch.picks).toEqual([
      { name: "approve", arguments: { summary: "ok" }, toolCallId: expect.any(String) },
    ]);
  });
});

describe("a stalled stream", () => {
  it("a head with no token is cut at retry.requestTimeoutMs (read as the first-token bound) and retried with the same bytes", async () => {
    const h = upstreamHarness(upstream, orch, {
      retry: { attempts: 2, requestTimeoutMs: 300, initialBackoffMs: 1 },
    });
    upstream.script([{ stall: true }, { sse: answer(approve) }]);
    const { events, settlement } = await h.run("r1/coder/stall");
    expect(settlement.outcome).toBe("completed");
    expect(upstream.bodies[1]).toBe(upstream.bodies[0]);
    expect(retries(events)[0]!.message).toMatch(
      /no first token within 0\.3 s \(first-token timer, retry.firstTokenTimeoutMs\)/,
    );
    expect(JSON.stringify(events)).not.toContain("STALLED");
  });

  it("stalling every time settles failed stream-cut after the attempts", async () => {
    const h = upstreamHarness(upstream, orch, {
      retry: { attempts: 2, requestTimeoutMs: 200, initialBackoffMs: 1 },
    });
    upstream.script([{ stall: true }, { stall: true }]);
    const { settlement } = await h.run("r1/coder/stall2");
    expect(settlement).toMatchObject({ outcome: "failed", error: { cause: "stream-cut" } });
    expect(upstream.bodies).toHaveLength(2);
  });
});

describe("an endpoint that is down or loading is waited for", () => {
  it("503 three times, then 200: three retry events (cause unavailable), then the answer", async () => {
    const h = upstreamHarness(upstream, orch);
    const loading = {
      status: 503,
      body: JSON.stringify({
        object: "error",
        message: "loading",
        type: "ServiceUnavailableError",
        param: null,
        code: 503,
      }),
    };
    upstream.script([loading, loading, loading, { sse: answer(approve) }]);
    const { events, settlement } = await h.run("r1/coder/503");
    expect(settlement.outcome).toBe("completed");
    expect(upstream.bodies).toHaveLength(4);
    expect(new Set(upstream.bodies).size).toBe(1);
    expect(retries(events).map((r) => [r.attempt, r.cause])).toEqual([
      [1, "unavailable"],
      [2, "unavailable"],
      [3, "unavailable"],
    ]);
    expect(retries(events)[0]!.message).toContain(`${upstream.baseUrl}/chat/completions`);
    expect(retries(events)[0]!.message).toContain("model entry `sim`");
    expect(h.warns().filter((l) => l.msg === "model request retried")).toHaveLength(3);
  });

  it("429 with Retry-After: the wait is the server's when longer than the backoff", async () => {
    const h = upstreamHarness(upstream, orch);
    upstream.script([
      { status: 429, body: "{}", headers: { "retry-after": "0.05" } },
      { sse: answer(approve) },
    ]);
    const { events, settlement } = await h.run("r1/coder/429");
    expect(settlement.outcome).toBe("completed");
    expect(retries(events)).toMatchObject([{ cause: "unavailable", waitMs: 50 }]);
  });

  it("connection refused until the server comes up: waited for, then the answer", async () => {
    const port = await freePort();
    const h = upstreamHarness({ baseUrl: `http://127.0.0.1:${port}/v1` }, orch, {
      retry: { maxWaitMs: 60_000, initialBackoffMs: 50, maxBackoffMs: 100 },
    });
    const admitted = (await h.admit("r1/coder/down", {})).json() as { submissionId: string };
    let late: ScriptedUpstream | undefined;
    for (let i = 0; i < 400 && !late; i++) {
      if (retries(await h.events("r1/coder/down")).length > 0) late = await startScriptedUpstream(port);
      else await new Promise((r) => setTimeout(r, 10));
    }
    try {
      late?.script([{ sse: answer(approve) }]);
      const { events, settlement } = await h.settled("r1/coder/down", admitted.submissionId);
      expect(settlement.outcome).toBe("completed");
      expect(retries(events)[0]!.message).toMatch(/cannot reach the endpoint \(ECONNREFUSED\)/);
      expect(orch.picks.map((p) => p.name)).toEqual(["approve"]);
    } finally {
      await late?.close();
    }
  });

  it("past retry.maxWaitMs the Submission settles failed, cause unavailable, naming the endpoint and model entry", async () => {
    const h = upstreamHarness(upstream, orch, {
      retry: { maxWaitMs: 20, initialBackoffMs: 5, maxBackoffMs: 10 },
    });
    const down = { status: 502, body: "" };
    upstream.script(Array.from({ length: 50 }, () => down));
    const { settlement } = await h.run("r1/coder/gone");
    expect(settlement).toMatchObject({
      outcome: "failed",
      error: { type: "provider", cause: "unavailable" },
    });
    expect(settlement.error?.message).toContain(`${upstream.baseUrl}/chat/completions`);
    expect(settlement.error?.message).toContain("model entry `sim`");
    expect(settlement.error?.message).toContain("HTTP 502 (no body)");
  });

  it("an abort ends a wait at once: settled aborted, no further request", async () => {
    const h = upstreamHarness(upstream, orch, {
      retry: { maxWaitMs: 600_000, initialBackoffMs: 60_000, maxBackoffMs: 60_000 },
    });
    upstream.script([{ status: 503, body: "" }]);
    const admitted = (await h.admit("r1/coder/cancel", {})).json() as { submissionId: string };
    for (let i = 0; i < 400 && retries(await h.events("r1/coder/cancel")).length === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    await h.app.inject({ method: "POST", url: "/conversations/r1%2Fcoder%2Fcancel/abort", headers: auth });
    const { settlement } = await h.settled("r1/coder/cancel", admitted.submissionId);
    expect(settlement.outcome).toBe("aborted");
    await h.app.conversations.idle();
    expect(upstream.bodies).toHaveLength(1);
  }, 20_000);
});
