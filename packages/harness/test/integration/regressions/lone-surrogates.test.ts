/**
 * Regression (issue 25 §8): lone surrogates in a model's arguments were delivered to the Machine
 * and replayed as they came. Sent back, a lone surrogate is no valid UTF-8: a real server's
 * tokenizer refuses the request, and every later request of the conversation with it. Root
 * cause: JSON.parse keeps `"\ud800"` as a lone UTF-16 unit and nothing checked. Fixed: at
 * ingestion each lone surrogate becomes U+FFFD — in the answer's text, the tool name, the parsed
 * arguments, so in the replay and in the pick delivered; the model's raw argument text stays in
 * the transcript only; the replay-lint refuses (strict) or repairs any left.
 *
 * Bytes: llama-server's recorded chunk envelope (`../shared/cases/real-servers/llama-server/
 * c1_stream.response`, via the scripted-upstream fixture) around hand-written deltas; a lone
 * surrogate reaches a client either as the JSON escape `\ud800` inside the model's argument text
 * (RFC 8259 §8.2 allows it: "unpaired surrogates … the behavior of software that receives JSON
 * texts containing such values is unpredictable") or escaped in the SSE event's own JSON.
 */
import type { StreamEvent } from "@jr2/wire";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeOrchestrator,
  answer as pickAnswer,
  startFakeOrchestrator,
} from "../../fixtures/fake-orchestrator.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../../fixtures/scripted-upstream.js";
import { isByteExtension, messagesOf, upstreamHarness } from "../../fixtures/upstream-harness.js";

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

let upstream: ScriptedUpstream;
let orch: FakeOrchestrator;
beforeEach(async () => {
  upstream = await startScriptedUpstream();
  orch = await startFakeOrchestrator();
  let n = 0;
  orch.answer = () => pickAnswer({ allowed: ["approve"], turnComplete: ++n >= 2 });
});
afterEach(async () => {
  await upstream.close();
  await orch.close();
});

/** The model's argument text, as written on the wire in two ways. */
const SHAPES: Array<[string, string]> = [
  // The escape inside the argument text: JSON.stringify keeps the six characters `\ud800`.
  ["escaped in the model's argument JSON", '{"summary":"half \\ud800 a pair"}'],
  // A lone unit in the argument text itself: the SSE event's JSON carries it as `\ud800`.
  ["escaped in the SSE event's JSON", '{"summary":"half \ud800 a pair"}'],
];

describe("lone surrogates in a model's answer", () => {
  for (const [what, args] of SHAPES) {
    it(`${what}: the pick carries U+FFFD, the replay is well-formed, the transcript keeps the raw text`, async () => {
      const h = upstreamHarness(upstream, orch);
      upstream.script([
        { sse: answer({ content: "text \udc00 alone", toolCalls: [{ name: "approve", arguments: args }] }) },
        { sse: answer({ toolCalls: [{ name: "approve", arguments: '{"summary":"second"}' }] }) },
      ]);
      const { settlement, events } = await h.run(`r1/coder/lone-${what.length}`);
      expect(settlement.outcome).toBe("completed");
      expect(orch.picks.map((p) => p.arguments)).toEqual([
        { summary: "half \uFFFD a pair" },
        { summary: "second" },
      ]);
      // The second request replays the first answer well-formed, and extends the first request.
      expect(upstream.bodies).toHaveLength(2);
      const replayed = messagesOf(upstream.bodies[1]!).find((m) => m.role === "assistant") as {
        content: string;
        tool_calls: Array<{ function: { arguments: string } }>;
      };
      expect(replayed.content).toBe("text \uFFFD alone");
      expect(JSON.parse(replayed.tool_calls[0]!.function.arguments)).toEqual({
        summary: "half \uFFFD a pair",
      });
      expect(LONE.test(JSON.stringify(JSON.parse(upstream.bodies[1]!)))).toBe(false);
      expect(upstream.bodies[1]).not.toMatch(/\\ud[89ab]|\\udc/i);
      expect(isByteExtension(upstream.bodies[0]!, upstream.bodies[1]!)).toBe(true);
      // Only the transcript holds what the model sent.
      const entry = events.find(
        (e): e is Extract<StreamEvent, { type: "transcript" }> =>
          e.type === "transcript" && e.entry.kind === "answer",
      );
      const call = entry?.entry.kind === "answer" ? entry.entry.toolCalls[0] : undefined;
      expect(call?.rawArguments).toBe(args);
    });
  }
});
