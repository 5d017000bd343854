/**
 * Regression (issue 25 §1–§3): tool calls a real server streams that cost a valid pick.
 * - Four identical `approve{"summary":"dup"}` calls in one answer (distinct ids) delivered
 *   nothing: `runaway: 4 identical consecutive tool calls`. Root cause: `countAnswer` counted the
 *   calls inside one answer as consecutive answers. Fixed: runaway counts answers; identical
 *   calls within an answer run once, the rest are answered "Not run: the same call appears
 *   earlier in this answer" (bytes hand-written after OpenAI's parallel tool-call stream format).
 * - Two calls sharing one id at indexes 0 and 1 (llama.cpp sends one id for every call of an
 *   answer): the second call's deltas were merged into call 0, then opened a block with no name —
 *   a call of tool `""`. Root cause: pi-ai's `ensureToolCallBlock` matched by id before index.
 *   Fixed: a `pnpm patch` of pi-ai (docs/upstream/pi-ai-tool-call-index.patch) matches by index
 *   whenever one is sent. Ids are made unique per conversation at ingestion (the server's id kept
 *   as `serverId` in the transcript), so a refused pick then a valid pick under one server id are
 *   two calls with two ids in the replay and two idempotency keys.
 * - No `index` at all (older Ollama: id on the first delta only), or every call at index 0 with
 *   distinct ids: the calls were split into nameless fragments or merged. Fixed by the same
 *   patch: by id when ids differ; an id-less, index-less delta continues the last call. When
 *   nothing separates two calls (index 0, no id), one warn line and the transcript say so.
 * Bytes: hand-written after OpenAI's chat-completions streaming format (`delta.tool_calls[]` with
 * `index`, `id`, `function.name`, `function.arguments`), varied as the servers vary it.
 */
import type { StreamEvent, TranscriptToolCall } from "@jr2/wire";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeOrchestrator,
  answer as pickAnswer,
  startFakeOrchestrator,
} from "../../fixtures/fake-orchestrator.js";
import {
  answer,
  chunk,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../fixtures/scripted-upstream.js";
import { messagesOf, upstreamHarness } from "../../fixtures/upstream-harness.js";

let upstream: ScriptedUpstream;
let orch: FakeOrchestrator;
beforeEach(async () => {
  upstream = await startScriptedUpstream();
  orch = await startFakeOrchestrator();
  orch.answer = () => pickAnswer({ allowed: ["approve", "request_changes"], turnComplete: false });
});
afterEach(async () => {
  await upstream.close();
  await orch.close();
});

/** One `delta.tool_calls` entry as its own event; `index`/`id` left out when undefined. */
const tc = (fields: { index?: number; id?: string; name?: string; arguments?: string }) =>
  chunk([
    {
      index: 0,
      finish_reason: null,
      delta: {
        tool_calls: [
          {
            ...(fields.index !== undefined ? { index: fields.index } : {}),
            ...(fields.id !== undefined ? { id: fields.id } : {}),
            type: "function",
            function: {
              ...(fields.name !== undefined ? { name: fields.name } : {}),
              arguments: fields.arguments ?? "",
            },
          },
        ],
      },
    },
  ]);
const open = chunk([{ index: 0, finish_reason: null, delta: { role: "assistant", content: null } }]);
const end = chunk([{ index: 0, finish_reason: "tool_calls", delta: {} }]);
const done = { sse: answer({ content: "I have finished." }) };

const calls = (events: StreamEvent[]): TranscriptToolCall[] =>
  events.flatMap((e) =>
    e.type === "transcript" && e.entry.kind === "answer" && e.entry.replayed ? e.entry.toolCalls : [],
  );
const toolResults = (body: string) =>
  messagesOf(body)
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));

describe("the same call several times in one answer (§1)", () => {
  it("four identical approve calls: delivered once, the other three answered 'Not run', the Turn goes on", async () => {
    const dup = (i: number) => [
      tc({ index: i, id: `call_${i}`, name: "approve" }),
      tc({ index: i, arguments: '{"summary":"dup"}' }),
    ];
    upstream.script([{ sse: [open, ...dup(0), ...dup(1), ...dup(2), ...dup(3), end] }, done]);
    const h = upstreamHarness(upstream, orch);
    const { settlement, events } = await h.run("r1/coder/dup-calls");
    expect(settlement.outcome).toBe("completed");
    expect(settlement.error).toBeUndefined();
    expect(orch.picks.map((p) => [p.name, p.arguments])).toEqual([["approve", { summary: "dup" }]]);
    const results = toolResults(upstream.bodies[1]!);
    expect(results).toHaveLength(4);
    expect(results.slice(1)).toEqual(Array(3).fill("Not run: the same call appears earlier in this answer."));
    expect(calls(events).map((c) => c.disposition)).toEqual(["pick", "not-run", "not-run", "not-run"]);
  });

  it("the same call in four answers in a row is still a runaway", async () => {
    orch.answer = () => pickAnswer({ allowed: ["approve"], moved: false });
    const same = { sse: answer({ toolCalls: [{ name: "approve", arguments: '{"summary":"x"}' }] }) };
    upstream.script([same, same, same, same, same]);
    const { settlement } = await upstreamHarness(upstream, orch).run("r1/coder/dup-answers");
    expect(settlement).toMatchObject({ outcome: "failed", error: { type: "runaway" } });
    expect(upstream.bodies).toHaveLength(4);
  });
});

describe("calls that share one id (§2, llama.cpp)", () => {
  it("two calls at indexes 0 and 1 under one id: both delivered with their own name and arguments", async () => {
    upstream.script([
      {
        sse: [
          open,
          tc({ index: 0, id: "call_same", name: "approve" }),
          tc({ index: 0, arguments: '{"summary":"A"}' }),
          tc({ index: 1, id: "call_same", name: "request_changes" }),
          tc({ index: 1, arguments: '{"notes":"B"}' }),
          end,
        ],
      },
      done,
    ]);
    const h = upstreamHarness(upstream, orch);
    const { settlement, events } = await h.run("r1/coder/shared-id");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks.map((p) => [p.name, p.arguments])).toEqual([
      ["approve", { summary: "A" }],
      ["request_changes", { notes: "B" }],
    ]);
    const ids = calls(events).map((c) => c.id);
    expect(new Set(ids).size).toBe(2);
    expect(calls(events).map((c) => c.serverId ?? c.id)).toEqual(["call_same", "call_same"]);
    expect(JSON.stringify(h.warns())).not.toContain('There is no tool ""');
  });

  it("a refused pick, then a valid pick, one server id, one Turn: the valid pick gets its own answer", async () => {
    let n = 0;
    orch.answer = () =>
      ++n === 1
        ? pickAnswer({ allowed: ["request_changes"], moved: false, refusal: "off-menu" })
        : pickAnswer({ allowed: [], turnComplete: true });
    upstream.script([
      { sse: answer({ toolCalls: [{ id: "call_llama", name: "approve", arguments: '{"summary":"x"}' }] }) },
      {
        sse: answer({
          toolCalls: [{ id: "call_llama", name: "request_changes", arguments: '{"notes":"y"}' }],
        }),
      },
      done,
    ]);
    const { settlement, events } = await upstreamHarness(upstream, orch).run("r1/coder/refused-then-valid");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks.map((p) => p.name)).toEqual(["approve", "request_changes"]);
    expect(new Set(orch.picks.map((p) => p.toolCallId)).size).toBe(2);
    // jr2's ids differ (the stream's pick events and the transcript carry them); the server's stays beside.
    const picks = events.flatMap((e) => (e.type === "pick" ? [e] : []));
    expect(new Set(picks.map((p) => p.toolCallId)).size).toBe(2);
    expect(picks.map((p) => p.answer?.turnComplete)).toEqual([false, true]);
    expect(calls(events).map((c) => c.serverId ?? c.id)).toEqual(["call_llama", "call_llama"]);
    expect(new Set(calls(events).map((c) => c.id)).size).toBe(2);
    const replayed = messagesOf(upstream.bodies[1]!).flatMap((m) =>
      m.role === "assistant" ? ((m.tool_calls as Array<{ id: string }>) ?? []).map((c) => c.id) : [],
    );
    expect(replayed).toEqual([picks[0]!.toolCallId]);
  });
});

describe("calls without an index, or all at index 0 (§3)", () => {
  it("no index, the id on the first delta only: each call reassembled whole", async () => {
    upstream.script([
      {
        sse: [
          open,
          tc({ id: "a1", name: "approve" }),
          tc({ arguments: '{"summary":' }),
          tc({ arguments: '"A"}' }),
          tc({ id: "b2", name: "request_changes" }),
          tc({ arguments: '{"notes":"B"}' }),
          end,
        ],
      },
      done,
    ]);
    const { settlement } = await upstreamHarness(upstream, orch).run("r1/coder/no-index");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks.map((p) => [p.name, p.arguments])).toEqual([
      ["approve", { summary: "A" }],
      ["request_changes", { notes: "B" }],
    ]);
  });

  it("every call at index 0 with distinct ids: reassembled by id", async () => {
    upstream.script([
      {
        sse: [
          open,
          tc({ index: 0, id: "a1", name: "approve", arguments: '{"summary":"A"}' }),
          tc({ index: 0, id: "b2", name: "request_changes", arguments: '{"notes":"B"}' }),
          end,
        ],
      },
      done,
    ]);
    const { settlement } = await upstreamHarness(upstream, orch).run("r1/coder/all-index-0");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks.map((p) => [p.name, p.arguments])).toEqual([
      ["approve", { summary: "A" }],
      ["request_changes", { notes: "B" }],
    ]);
  });

  it("index 0 and no id for two calls: nothing delivered, one warn line and the transcript say why", async () => {
    upstream.script([
      {
        sse: [
          open,
          tc({ index: 0, name: "approve", arguments: '{"summary":"A"}' }),
          tc({ index: 0, name: "request_changes", arguments: '{"notes":"B"}' }),
          end,
        ],
      },
      done,
    ]);
    const h = upstreamHarness(upstream, orch);
    const { settlement, events } = await h.run("r1/coder/merged");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks).toHaveLength(0);
    const merged = h.warns().filter((l) => String(l.msg).includes("arrived merged into one"));
    expect(merged).toHaveLength(1);
    expect(calls(events)).toMatchObject([
      { disposition: "not-run", reason: expect.stringContaining("neither an index nor an id") },
    ]);
    expect(toolResults(upstream.bodies[1]!)[0]).toContain("arrived merged into one");
  });
});
