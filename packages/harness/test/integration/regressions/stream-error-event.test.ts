/**
 * Regression (issue 25 §5): a mid-stream error event — `data: {"error":{"message":"CUDA out of
 * memory…"}}` (vLLM, SGLang) or an error object at the event's top level
 * (`data: {"object":"error","message":…}`) — was retried correctly, but the server's message
 * appeared nowhere: the top-level form read as "the stream ended without a finish reason", and
 * the warn log dropped every server word. Fixed: both forms are read as the server's error; its
 * message rides the retry event, the warn log (cut at 300 characters) and the fault detail.
 * Bytes: hand-written after vLLM's documented error shapes (`{"error":{…}}` inside SSE, and
 * vLLM's top-level `{object:"error", message, type, param, code}`).
 */
import type { StreamEvent } from "@jr2/wire";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import {
  answer,
  chunk,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../fixtures/scripted-upstream.js";
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

const OOM = "CUDA out of memory. Tried to allocate 2.00 GiB";
const head = [
  chunk([{ index: 0, finish_reason: null, delta: { role: "assistant", content: null } }]),
  chunk([{ index: 0, finish_reason: null, delta: { content: "I will" } }]),
];
const shapes = {
  nested: JSON.stringify({ error: { message: OOM, type: "InternalServerError", code: 500 } }),
  "top-level": JSON.stringify({
    object: "error",
    message: OOM,
    type: "InternalServerError",
    param: null,
    code: 500,
  }),
};
const retries = (events: StreamEvent[]) => events.filter((e) => e.type === "retry");

describe("a mid-stream error event keeps the server's words", () => {
  for (const [shape, event] of Object.entries(shapes)) {
    it(`${shape}: retried with the same bytes; the retry line and the warn log carry the message`, async () => {
      upstream.script([{ sse: [...head, event] }, { sse: answer({ content: "I have finished." }) }]);
      const h = upstreamHarness(upstream, orch);
      const { settlement, events } = await h.run(`r1/coder/err-${shape}`);
      expect(settlement.outcome).toBe("completed");
      expect(upstream.bodies[1]).toBe(upstream.bodies[0]);
      expect(retries(events)).toHaveLength(1);
      expect(retries(events)[0]).toMatchObject({ cause: "stream-cut" });
      expect((retries(events)[0] as { message?: string }).message).toContain(OOM);
      const logged = h.warns().filter((l) => l.msg === "model request retried");
      expect(logged).toHaveLength(1);
      expect(String((logged[0] as { detail?: string }).detail)).toContain(OOM);
    });
  }

  it("past the bound: the fault detail and the warn line carry the message", async () => {
    const broken = { sse: [...head, shapes["top-level"]] };
    upstream.script([broken, broken, broken]);
    const h = upstreamHarness(upstream, orch);
    const { settlement } = await h.run("r1/coder/err-bound");
    expect(settlement.error).toMatchObject({ cause: "stream-cut" });
    expect(settlement.error?.message).toContain(OOM);
    const failed = h.warns().filter((l) => l.msg === "the Submission failed on the model side");
    expect(String((failed[0] as { detail?: string }).detail)).toContain(OOM);
  });
});
