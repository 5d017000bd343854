/**
 * Regression (issue 10 §3 and §1, cases C6 and C7; found by a hostile-upstream pass): bytes a
 * scripted upstream chose that a home-lab server or proxy can send.
 * - `503` with `Retry-After: 0` (or negative, or a date in the past) forever: the wait loop
 *   retried without end and the Submission never settled. Root cause: the server's wait (0)
 *   replaced the backoff, so none of `retry.maxWaitMs` was ever spent. Fixed: Retry-After is a
 *   floor over the backoff, never below it. Likewise a proxy that answers 504 only after its own
 *   timeout (nginx: 60 s) stretched the 300 s bound many times over, since only the sleeps
 *   counted. Fixed: the bound is also wall time since the endpoint was first seen down.
 * - A usage number past 2^53 (`cached_tokens: 1e300`): every read of the conversation's stream
 *   answered 500 (`FST_ERR_RESPONSE_SERIALIZATION`) from then on, so the Turn could never
 *   settle. Root cause: `Number.isInteger` accepts it, the stream's integer schema does not.
 *   Fixed: only safe integers are read; anything else is unreported.
 * - Tool calls without ids (two in one answer): the first pick was delivered with the second
 *   call's arguments. A server that numbers ids per answer (`call_0` every time): a valid call
 *   was refused because an earlier answer's call of the same id was not JSON. Root cause: the
 *   per-run verdict maps were keyed by the server's id. Fixed: verdicts are per answer and
 *   every call gets an id of its own within its answer at ingestion.
 * - A `200` that is not an event stream (an HTML page: a web UI or proxy at the baseUrl; a JSON
 *   body: a server that ignored `stream: true`) was retried and then reported as "the stream
 *   ended without a finish reason (closed)", which names neither. Fixed: `bad-request` at once,
 *   naming the content-type and the baseUrl to check.
 * - A `data:` line that is not JSON faulted at once with V8's parse message and no cause, and
 *   the OpenAI client printed the raw line (which may hold argument text) to the Harness's
 *   stderr. Fixed: the probe fails the body before the client reads that event; it is retried
 *   as a cut stream (bounded), with a message that says what was wrong and quotes nothing.
 * - A 401 (wrong key) and a 404 without a model named (a baseUrl missing `/v1`) were told to
 *   "check the server's chat template and flags"; vLLM's "does not exist." ended in "..".
 *   Fixed: each status names its own fix (the entry's `apiKey`, the entry's `baseUrl`).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { StreamEvent } from "@jr2/wire";
import { describe, expect, it, vi } from "vitest";
import { type FakeOrchestrator, answer as pickAnswer } from "../../fixtures/fake-orchestrator.js";
import { auth } from "../../fixtures/harness.js";
import { answer, chunk, type ScriptedUpstream } from "../../fixtures/scripted-upstream.js";
import { messagesOf, upstreamHarness } from "../../fixtures/upstream-harness.js";
import { upstreamPerTest } from "../../fixtures/upstream-per-test.js";

let upstream: ScriptedUpstream;
let orch: FakeOrchestrator;
upstreamPerTest((pair) => ({ upstream, orch } = pair));

const retries = (events: StreamEvent[]) =>
  events.filter((e): e is Extract<StreamEvent, { type: "retry" }> => e.type === "retry");

describe("a Retry-After that asks for no wait cannot make the wait unbounded", () => {
  for (const retryAfter of ["0", "-5", "Thu, 01 Jan 1970 00:00:00 GMT"]) {
    it(`503 with Retry-After "${retryAfter}" forever: the Submission settles unavailable after retry.maxWaitMs`, async () => {
      const h = upstreamHarness(upstream, orch, {
        retry: { attempts: 3, maxWaitMs: 200, initialBackoffMs: 20, maxBackoffMs: 40 },
      });
      const loading = {
        status: 503,
        body: '{"error":{"message":"Loading model","type":"unavailable_error","code":503}}',
        headers: { "retry-after": retryAfter },
      };
      upstream.script(Array.from({ length: 5_000 }, () => loading));
      const { events, settlement } = await h.run(`r1/coder/ra-${retryAfter.length}`);
      expect(settlement.outcome).toBe("failed");
      expect(settlement.error).toMatchObject({ cause: "unavailable" });
      expect(settlement.error?.message).toContain("retry.maxWaitMs of model entry `sim`");
      // 200 ms of waiting at ≥ 10 ms a wait (half of the first backoff) is at most 20 waits.
      expect(upstream.bodies.length).toBeLessThanOrEqual(21);
      expect(retries(events).every((r) => r.waitMs > 0)).toBe(true);
    });
  }
});

describe("slow refusals cannot stretch retry.maxWaitMs", () => {
  it("504 after a delay each time: a few attempts, then unavailable", async () => {
    await upstream.close();
    const slow = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        bodies.push("");
        setTimeout(() => {
          res.writeHead(504, { "content-type": "text/html" });
          res.end("<html>504 Gateway Time-out</html>");
        }, 150);
      });
    });
    const bodies: string[] = [];
    await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
    const port = (slow.address() as AddressInfo).port;
    upstream = { close: () => new Promise((r) => slow.close(() => r())) } as ScriptedUpstream;
    const h = upstreamHarness({ baseUrl: `http://127.0.0.1:${port}/v1` }, orch, {
      retry: { attempts: 3, maxWaitMs: 300, initialBackoffMs: 20, maxBackoffMs: 40 },
    });
    const { settlement } = await h.run("r1/coder/slow-504");
    expect(settlement.error).toMatchObject({ cause: "unavailable" });
    // Each attempt takes ≥ 150 ms, so 300 ms of wall time allows at most 3 (+1 at the edge);
    // counting only the 20–40 ms sleeps allowed about ten.
    expect(bodies.length).toBeLessThanOrEqual(4);
  });
});

describe("usage numbers a stream cannot carry", () => {
  it("cached_tokens 1e300 and a negative prompt_tokens: reported as unknown; the stream stays readable", async () => {
    const h = upstreamHarness(upstream, orch);
    const usage = chunk([], {
      usage: {
        prompt_tokens: -5,
        completion_tokens: 2 ** 60,
        prompt_tokens_details: { cached_tokens: 1e300 },
      },
    });
    upstream.script([{ sse: answer({ content: "I have finished.", usage }) }]);
    const iid = "r1/coder/huge-usage";
    const { settlement, events } = await h.run(iid);
    expect(settlement.outcome).toBe("completed");
    const page = await h.app.inject({
      method: "GET",
      url: `/conversations/${encodeURIComponent(iid)}/stream?offset=0&wait=0`,
      headers: auth,
    });
    expect(page.statusCode).toBe(200);
    expect(events.find((e) => e.type === "usage")).toMatchObject({
      unreported: ["promptTokens", "cachedTokens", "completionTokens"],
    });
  });
});

describe("tool-call ids a server leaves out or repeats", () => {
  const call = (index: number, fn: Record<string, unknown>, id?: string) =>
    chunk([
      {
        index: 0,
        finish_reason: null,
        delta: { tool_calls: [{ index, ...(id ? { id } : {}), type: "function", function: fn }] },
      },
    ]);

  it("two calls without ids: each pick carries its own arguments; the replay gives each call its own id", async () => {
    orch.answer = () => pickAnswer({ allowed: ["approve", "request_changes"], turnComplete: false });
    upstream.script([
      {
        sse: [
          chunk([{ index: 0, finish_reason: null, delta: { role: "assistant", content: null } }]),
          call(0, { name: "approve", arguments: '{"summary":"A"}' }),
          call(1, { name: "request_changes", arguments: '{"notes":"B"}' }),
          chunk([{ index: 0, finish_reason: "tool_calls", delta: {} }]),
        ],
      },
      { sse: answer({ content: "I have finished." }) },
    ]);
    const { settlement } = await h(upstream).run("r1/coder/no-ids");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks.map((p) => [p.name, p.arguments])).toEqual([
      ["approve", { summary: "A" }],
      ["request_changes", { notes: "B" }],
    ]);
    const replay = messagesOf(upstream.bodies[1]!);
    const assistant = replay.find((m) => m.role === "assistant") as { tool_calls: Array<{ id: string }> };
    const ids = assistant.tool_calls.map((c) => c.id);
    const results = replay.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
    expect(new Set(ids).size).toBe(2);
    expect(ids).not.toContain("");
    expect(results).toEqual(ids);
  });

  it("an id repeated in the next answer (`call_0` every answer): the second answer's valid call is delivered", async () => {
    orch.answer = () => pickAnswer({ allowed: [], turnComplete: true });
    upstream.script([
      { sse: answer({ toolCalls: [{ id: "call_0", name: "approve", arguments: "not json" }] }) },
      { sse: answer({ toolCalls: [{ id: "call_0", name: "approve", arguments: '{"summary":"fine"}' }] }) },
      { sse: answer({ content: "I have finished." }) },
    ]);
    const { settlement } = await h(upstream).run("r1/coder/reused-id");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks.map((p) => [p.name, p.arguments])).toEqual([["approve", { summary: "fine" }]]);
  });
});

describe("answers that are not a stream", () => {
  for (const [what, type, body] of [
    ["an HTML page", "text/html; charset=utf-8", "<html><body>Open WebUI</body></html>"],
    [
      "a JSON body",
      "application/json",
      '{"choices":[{"index":0,"message":{"content":"hi"},"finish_reason":"stop"}]}',
    ],
  ] as const) {
    it(`HTTP 200 with ${what}: bad-request at once, naming the content-type and the endpoint`, async () => {
      upstream.script([{ status: 200, body, headers: { "content-type": type } }]);
      const { events, settlement } = await h(upstream).run(`r1/coder/not-sse-${type.length}`);
      expect(settlement.outcome).toBe("failed");
      expect(settlement.error).toMatchObject({ cause: "bad-request" });
      expect(settlement.error?.message).toContain(`content-type ${type}, not an event stream`);
      expect(settlement.error?.message).toContain(`${upstream.baseUrl}/chat/completions`);
      expect(settlement.error?.message).toContain("model entry `sim`");
      expect(upstream.bodies).toHaveLength(1);
      expect(retries(events)).toHaveLength(0);
    });
  }

  it("a data: line that is not JSON: never printed, retried with the same bytes, then the answer", async () => {
    const printed: unknown[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...a) => void printed.push(a));
    upstream.script([
      {
        sse: ['{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"SECRET-ARG'],
      },
      { sse: answer({ toolCalls: [{ name: "approve", arguments: '{"summary":"ok"}' }] }) },
    ]);
    const harness = h(upstream);
    const { events, settlement } = await harness.run("r1/coder/garbage-line");
    expect(settlement.outcome).toBe("completed");
    expect(upstream.bodies[1]).toBe(upstream.bodies[0]);
    expect(retries(events)).toMatchObject([{ cause: "stream-cut" }]);
    expect(retries(events)[0]?.message).toContain("an event whose data is not JSON");
    expect(orch.picks.map((p) => p.name)).toEqual(["approve"]);
    spy.mockRestore();
    expect(JSON.stringify(printed)).not.toContain("SECRET-ARG");
    expect(JSON.stringify(harness.lines)).not.toContain("SECRET-ARG");
  });
});

describe("refusals whose fix is in the model entry", () => {
  it.each([
    [
      401,
      '{"error":{"message":"Invalid API key","type":"auth_error"}}',
      /HTTP 401 — Invalid API key\. The server refused the key: set the model entry's `apiKey`/,
    ],
    [
      404,
      "<html>Not Found</html>",
      /HTTP 404 — <html>Not Found<\/html>\. Nothing answers chat completions at this URL: check the model entry's baseUrl/,
    ],
    [
      404,
      '{"object":"error","message":"The model `tiny` does not exist.","type":"NotFoundError","code":404}',
      /does not exist\. The server does not serve the id `tiny-qwen3`/,
    ],
  ])("HTTP %i: bad-request or unknown-model at once, naming the fix", async (status, body, message) => {
    upstream.script([{ status, body }]);
    const { settlement } = await h(upstream).run(`r1/coder/refused-${status}-${body.length}`);
    expect(settlement.outcome).toBe("failed");
    expect(settlement.error?.message).toMatch(message);
    expect(settlement.error?.message).not.toMatch(/chat template/);
    expect(upstream.bodies).toHaveLength(1);
  });
});

const h = (u: ScriptedUpstream) => upstreamHarness(u, orch);
