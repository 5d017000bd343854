import { describe, expect, it } from "vitest";
import { modelTableWarnings, parseModelTable } from "../../../src/provider/models.js";
import type { FakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { answer, chunk, type ScriptedUpstream } from "../../fixtures/scripted-upstream.js";
import { upstreamHarness } from "../../fixtures/upstream-harness.js";
import { approve, retries, upstreamPerTest } from "../../fixtures/upstream-per-test.js";

let upstream: ScriptedUpstream;
let orch: FakeOrchestrator;
upstreamPerTest((pair) => ({ upstream, orch } = pair));

/** An approve answer whose first `n` deltas are words of text (each a token on the wire). */
function slowAnswer(n: number): string[] {
  const [role, ...rest] = answer(approve);
  const words = Array.from({ length: n }, (_, i) =>
    chunk([{ finish_reason: null, index: 0, delta: { content: `word${i} ` } }]),
  );
  return [role as string, ...words, ...rest];
}

describe("a stream that keeps producing is never cut", () => {
  it("tokens 150 ms apart for over two seconds, past the older whole-request bound of 1.5 s: one request, no retry, the pick delivered once", async () => {
    // Bounds with room for a loaded CI box (a first token later than 0.6 s was seen there); the
    // stream still outlasts the old whole-request bound, which is what this case is about.
    const h = upstreamHarness(upstream, orch, {
      retry: { attempts: 3, requestTimeoutMs: 1_500, idleTimeoutMs: 1_000, initialBackoffMs: 1 },
    });
    upstream.script([{ trickle: slowAnswer(16), gapMs: 150 }]);
    const { events, settlement } = await h.run("r1/coder/trickle");
    expect(settlement.outcome).toBe("completed");
    expect(upstream.bodies).toHaveLength(1);
    expect(retries(events)).toEqual([]);
    expect(orch.picks).toEqual([
      { name: "approve", arguments: { summary: "ok" }, toolCallId: expect.any(String) },
    ]);
  });

  it("SSE comments count as bytes: 600 ms between events, a keep-alive every 100 ms, idle bound 400 ms: not cut", async () => {
    const h = upstreamHarness(upstream, orch, {
      retry: { attempts: 3, firstTokenTimeoutMs: 5_000, idleTimeoutMs: 400, initialBackoffMs: 1 },
    });
    upstream.script([{ trickle: slowAnswer(1), gapMs: 600, keepAliveMs: 100 }]);
    const { events, settlement } = await h.run("r1/coder/keepalive");
    expect(settlement.outcome).toBe("completed");
    expect(upstream.bodies).toHaveLength(1);
    expect(retries(events)).toEqual([]);
  });

  it("without the keep-alive comments the same pacing is cut by the idle timer", async () => {
    const h = upstreamHarness(upstream, orch, {
      retry: { attempts: 2, firstTokenTimeoutMs: 5_000, idleTimeoutMs: 400, initialBackoffMs: 1 },
    });
    upstream.script([{ trickle: slowAnswer(1), gapMs: 600 }, { sse: answer(approve) }]);
    const { events } = await h.run("r1/coder/no-keepalive");
    expect(retries(events)[0]?.message).toContain("idle timer");
  });
});

describe("a server that sends its head and a token, then nothing", () => {
  it("is cut by the idle timer, not the first-token one; the retry line names it; the same bytes again answer", async () => {
    const h = upstreamHarness(upstream, orch, {
      retry: { attempts: 3, firstTokenTimeoutMs: 60_000, idleTimeoutMs: 300, initialBackoffMs: 1 },
    });
    upstream.script([{ trickle: slowAnswer(3), gapMs: 10, silentAfter: 2 }, { sse: answer(approve) }]);
    const { events, settlement } = await h.run("r1/coder/head-silence");
    expect(settlement.outcome).toBe("completed");
    expect(upstream.bodies).toHaveLength(2);
    expect(upstream.bodies[1]).toBe(upstream.bodies[0]);
    const [retry] = retries(events);
    expect(retry).toMatchObject({ attempt: 1, cause: "stream-cut" });
    expect(retry?.message).toContain(
      "the stream went silent for 0.3 s after its first token (idle timer, retry.idleTimeoutMs)",
    );
    expect(h.warns().some((l) => String(l.detail ?? "").includes("idle timer"))).toBe(true);
    expect(orch.picks).toHaveLength(1);
  });

  it("a head with no token at all is cut by the first-token timer, named so", async () => {
    const h = upstreamHarness(upstream, orch, {
      retry: { attempts: 2, firstTokenTimeoutMs: 300, idleTimeoutMs: 60_000, initialBackoffMs: 1 },
    });
    upstream.script([{ trickle: slowAnswer(1), gapMs: 10, silentAfter: 1 }, { sse: answer(approve) }]);
    const { events, settlement } = await h.run("r1/coder/head-only");
    expect(settlement.outcome).toBe("completed");
    expect(retries(events)[0]?.message).toContain("no first token within 0.3 s (first-token timer");
  });
});

describe("retry.requestTimeoutMs in a model table", () => {
  it("is read as the first-token bound, with one warn line naming the entry and the new key", () => {
    const base = { baseUrl: "http://gpu:8000/v1", id: "qwen3", contextWindow: 32768, maxTokens: 4096 };
    const table = parseModelTable(
      JSON.stringify({ old: { ...base, retry: { requestTimeoutMs: 900_000 } }, fresh: base }),
    );
    const warnings = modelTableWarnings(table);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      "model entry `old`: retry.requestTimeoutMs (900000 ms) is read as retry.firstTokenTimeoutMs",
    );
  });
});
