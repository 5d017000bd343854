/**
 * Regression (issue 25 §7: "logs carry them escaped"): a tool name a model invented reached the
 * Harness's warn line as it was written. pino's JSON escapes C0 controls but neither C1 controls
 * (U+009B is a one-character CSI) nor bidi controls (U+202E reorders the line in any viewer of
 * the log). Fixed: the Harness's log sink escapes its message and string fields with the CLI's
 * own `escapeModelText`. Bytes: llama-server's recorded chunk envelope (scripted-upstream
 * fixture) around a hand-written tool name.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeOrchestrator,
  answer as pickAnswer,
  startFakeOrchestrator,
} from "../../fixtures/fake-orchestrator.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../../fixtures/scripted-upstream.js";
import { upstreamHarness } from "../../fixtures/upstream-harness.js";

let upstream: ScriptedUpstream;
let orch: FakeOrchestrator;
beforeEach(async () => {
  upstream = await startScriptedUpstream();
  orch = await startFakeOrchestrator();
  orch.answer = () => pickAnswer({ allowed: [], turnComplete: true });
});
afterEach(async () => {
  await upstream.close();
  await orch.close();
});

describe("a model-written tool name in the Harness's log", () => {
  it("is written escaped: no raw newline, C1 or bidi control in any line", async () => {
    const h = upstreamHarness(upstream, orch);
    upstream.script([
      { sse: answer({ toolCalls: [{ name: "run\u202Etests\u009b2J\nforged", arguments: "{}" }] }) },
      { sse: answer({ toolCalls: [{ name: "approve", arguments: '{"summary":"ok"}' }] }) },
    ]);
    const { settlement } = await h.run("r1/coder/log-escape");
    expect(settlement.outcome).toBe("completed");
    const warned = h.warns().find((l) => l.msg === "the model called a tool that is not in its tools block");
    expect(warned?.tool).toBe("run\\u{202E}tests\\x9b2J\\nforged");
    expect(h.lines.some((l) => /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/.test(JSON.stringify(l)))).toBe(
      false,
    );
  });
});
