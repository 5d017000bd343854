/**
 * Regression (issue 25 §4): Qwen3 writes its tool call as `<tool_call>{…}</tool_call>` inside
 * `<think>`; vLLM's reasoning parser keeps it in `delta.reasoning` and the answer carries
 * `tool_calls: []` and `finish_reason: "stop"`. The Harness saw a plain stop: two generic nudges
 * were spent and the pick was lost silently. Root cause: text-call detection read the content
 * only. Fixed: markup in the reasoning settles `textCall: true, textCallWhere: "reasoning"` with a
 * warn line naming the reasoning; the Orchestrator nudges with the `text-call` notice, whose
 * words (menu.ts) name the reasoning. The markup is never parsed or delivered.
 * Bytes: hand-written after vLLM ≥ 0.17's streaming format (`delta.reasoning`, `tool_calls: []`).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { noticeLine } from "../../../src/presenters/menu.js";
import { type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { chunk, type ScriptedUpstream, startScriptedUpstream } from "../../fixtures/scripted-upstream.js";
import { upstreamHarness } from "../../fixtures/upstream-harness.js";

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

const delta = (d: Record<string, unknown>, finish: string | null = null) =>
  chunk([{ index: 0, finish_reason: finish, delta: d }]);

describe("a tool call written inside the reasoning", () => {
  it("settles completed with textCall in the reasoning, delivers nothing, warns naming the reasoning", async () => {
    upstream.script([
      {
        sse: [
          delta({ role: "assistant", content: null }),
          delta({ reasoning: "The newest Allowed now line decides: I call approve.\n" }),
          delta({ reasoning: '<tool_call>\n{"name": "approve", "arguments": {"summary": "SECRET ok"}}\n' }),
          delta({ reasoning: "</tool_call>" }),
          delta({ content: "", tool_calls: [] }),
          delta({}, "stop"),
        ],
      },
    ]);
    const h = upstreamHarness(upstream, orch);
    const { settlement } = await h.run("r1/coder/call-in-reasoning");
    expect(settlement).toMatchObject({ outcome: "completed", textCall: true, textCallWhere: "reasoning" });
    expect(orch.picks).toEqual([]);
    const warn = h.warns().filter((l) => String(l.msg).includes("inside its reasoning"));
    expect(warn).toHaveLength(1);
    expect(JSON.stringify(h.lines)).not.toContain("SECRET");
  });

  it("the nudge's notice names the reasoning", () => {
    expect(noticeLine({ type: "text-call", where: "reasoning" })).toMatch(/inside your reasoning/);
    expect(noticeLine({ type: "text-call" })).toMatch(/wrote a tool call out as text/);
  });
});
