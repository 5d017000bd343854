/**
 * Regression (issue 25 §13): a real llama-server (b9821, `--jinja`, Qwen3 template) streams
 * content, then `{"error":{"code":500,"message":"The model produced output that does not match the
 * expected peg-native format",…}}` and nothing after it. jr2 showed "the model's answer was cut
 * off", sent the same bytes 3 more times (each regenerating a whole answer, up to `maxTokens`)
 * and faulted `infra`/`stream-cut`. Root cause: every in-stream error was read as a transport
 * failure. Fixed: this one is the model's output — never retried; the Submission fails with cause
 * `unparsable-output` (reason `no-signal`) carrying the server's words, and the Orchestrator
 * nudges once with menu.ts's notice. Bytes: `../shared/cases/real-servers/llama-server/
 * unparsable_output_stream.response` (recorded, copied into test/fixtures/real-servers/).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { noticeLine } from "../../../src/presenters/menu.js";
import { type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { recorded, type ScriptedUpstream, startScriptedUpstream } from "../../fixtures/scripted-upstream.js";
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

describe("llama-server's in-stream error for output it cannot parse", () => {
  it("is never retried: one request, failed with cause unparsable-output and the server's words", async () => {
    const real = recorded("unparsable_output_stream");
    upstream.script([real, real, real, real]);
    const h = upstreamHarness(upstream, orch, {
      retry: { attempts: 4, maxWaitMs: 5_000, initialBackoffMs: 1, maxBackoffMs: 4 },
    });
    const { settlement, events } = await h.run("r1/coder/unparsable");
    expect(upstream.bodies).toHaveLength(1);
    expect(events.filter((e) => e.type === "retry")).toEqual([]);
    expect(settlement.outcome).toBe("failed");
    expect(settlement.error).toMatchObject({ cause: "unparsable-output" });
    expect(settlement.error?.message).toContain("could not read the model's answer as a tool call");
    expect(settlement.error?.message).toContain("does not match the expected peg-native format");
    expect(settlement.error?.message).not.toMatch(/cut off|stream-cut/);
    expect(orch.picks).toEqual([]);
  });

  it("the nudge's notice tells the model its last answer could not be read as a tool call", () => {
    expect(noticeLine({ type: "unparsable-output" })).toMatch(/could not be read as a tool call/);
  });
});
