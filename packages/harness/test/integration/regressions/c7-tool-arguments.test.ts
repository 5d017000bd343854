/**
 * Regression (issue 10 §1, cases C7 and C6): tool-call arguments that do not parse to a JSON
 * object were refused at delivery but replayed verbatim, so vLLM (which decodes them) handed a
 * string to templates that walk `arguments|items`, and llama-server answered the NEXT request
 * HTTP 500 (recorded: real-servers/llama-server/bad_args). Root cause: the raw bytes were the
 * replayed history. Fixed: arguments are normalized once at ingestion — history replays a JSON
 * object (`{}` when not one), the raw bytes are kept beside it, the receipt says what was sent,
 * and every later request extends the previous one byte for byte.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeOrchestrator,
  answer as pickAnswer,
  startFakeOrchestrator,
} from "../../fixtures/fake-orchestrator.js";
import { auth } from "../../fixtures/harness.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../../fixtures/scripted-upstream.js";
import { isByteExtension, messagesOf, upstreamHarness } from "../../fixtures/upstream-harness.js";

let upstream: ScriptedUpstream;
let orch: FakeOrchestrator;
beforeEach(async () => {
  upstream = await startScriptedUpstream();
  orch = await startFakeOrchestrator();
});
afterEach(async () => {
  await upstream.close();
  await orch.close();
});

/** [what, the model's bytes, the receipt, a marker of argument text no log line may carry]. */
const BAD: Array<[string, string, RegExp, string]> = [
  [
    "an object encoded twice (C7)",
    JSON.stringify(JSON.stringify({ summary: "SECRET-x" })),
    /are a JSON string, not a JSON object/,
    "SECRET",
  ],
  ["a string (C7)", '"SECRET approve"', /are a JSON string, not a JSON object/, "SECRET"],
  ["a number", "4242424242", /are a JSON number, not a JSON object/, "4242424242"],
  ["an array", '["SECRET"]', /are a JSON array, not a JSON object/, "SECRET"],
  ["truncated", '{"summary": "SECRET ha', /are not valid JSON/, "SECRET"],
  ["garbage", "SECRET not json at all", /are not valid JSON/, "SECRET"],
];

describe("arguments that are not a JSON object", () => {
  for (const [what, raw, receipt, marker] of BAD) {
    it(`${what}: nothing is delivered, the receipt says what was sent, the next request replays {} and extends the previous one`, async () => {
      const h = upstreamHarness(upstream, orch);
      upstream.script([
        { sse: answer({ toolCalls: [{ name: "approve", arguments: raw }] }) },
        { sse: answer({ content: "I have finished." }) },
      ]);
      const iid = `r1/coder/${what.length}`;
      const { settlement } = await h.run(iid, { turnId: "t-7" });
      expect(settlement.outcome).toBe("completed");
      expect(orch.picks).toHaveLength(0);
      expect(upstream.bodies).toHaveLength(2);
      const second = messagesOf(upstream.bodies[1]!);
      const call = second.find((m) => m.role === "assistant") as {
        tool_calls: Array<{ function: { arguments: string } }>;
      };
      expect(call.tool_calls[0]!.function.arguments).toBe("{}");
      const tool = second.find((m) => m.role === "tool")!;
      expect(String(tool.content)).toMatch(receipt);
      expect(String(tool.content)).toContain(`You sent: ${raw}`);
      expect(isByteExtension(upstream.bodies[0]!, upstream.bodies[1]!)).toBe(true);
      // The history route shows both: the normalized object and the model's bytes.
      const history = await h.app.inject({
        method: "GET",
        url: `/conversations/${encodeURIComponent(iid)}/history`,
        headers: auth,
      });
      const blocks = (history.json().messages as Array<{ role: string; content: unknown }>)
        .filter((m) => m.role === "assistant")
        .flatMap((m) => m.content as Array<{ type: string; arguments?: unknown; rawArguments?: string }>)
        .filter((b) => b.type === "toolCall");
      expect(blocks).toEqual([expect.objectContaining({ arguments: {}, rawArguments: raw })]);
      // The operator's warn line names the Turn and model, never the argument text.
      const warn = h.warns().find((l) => l.msg === "a tool call of the model was not run");
      expect(warn).toMatchObject({ iid, turnId: "t-7", model: "sim", tool: "approve" });
      expect(JSON.stringify(h.warns())).not.toContain(marker);
    });
  }

  it("empty arguments are a call without arguments: run with {} and replayed as {}", async () => {
    const h = upstreamHarness(upstream, orch);
    orch.answer = () => pickAnswer({ allowed: ["approve", "request_changes"], moved: false });
    upstream.script([
      { sse: answer({ toolCalls: [{ name: "finish", arguments: "" }] }) },
      { sse: answer({ content: "I have finished." }) },
    ]);
    const { settlement } = await h.run("r1/coder/empty");
    expect(settlement.outcome).toBe("completed");
    expect(orch.picks).toMatchObject([{ name: "finish", arguments: {} }]);
    const call = messagesOf(upstream.bodies[1]!).find((m) => m.role === "assistant") as {
      tool_calls: Array<{ function: { arguments: string } }>;
    };
    expect(call.tool_calls[0]!.function.arguments).toBe("{}");
    expect(isByteExtension(upstream.bodies[0]!, upstream.bodies[1]!)).toBe(true);
  });
});
