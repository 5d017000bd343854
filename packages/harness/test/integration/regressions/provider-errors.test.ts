/**
 * Regression (issue 10 §3): a refused model request faulted the Turn as a bare `infra` with the
 * OpenAI client's words ("400 status code (no body)": vLLM's top-level error body
 * `{object:"error", message, …}` was never read), so a workflow could not tell a context overflow
 * from a template error or a wrong model id. Root cause: nothing read the error body. Fixed: the
 * body is read in both shapes and classified into `error.cause`; none of these is retried.
 * llama-server's bodies are recorded (real-servers/llama-server/overflow_stream, bad_args); vLLM's
 * are written by hand from its documentation (not recorded here: no GPU).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { type ScriptedUpstream, type Step, startScriptedUpstream } from "../../fixtures/scripted-upstream.js";
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

/** vLLM's documented top-level error body (hand-written). */
const vllm = (status: number, type: string, message: string): Step => ({
  status,
  body: JSON.stringify({ object: "error", message, type, param: null, code: status }),
});

const VLLM_OVERFLOW =
  "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.";

const CASES: Array<[string, Step, string, string]> = [
  [
    "llama-server's exceed_context_size_error (recorded)",
    { recorded: "overflow_stream" },
    "context-overflow",
    "request (52458 tokens) exceeds the available context size (40960 tokens)",
  ],
  [
    "vLLM's context-length 400 (hand-written)",
    vllm(400, "BadRequestError", VLLM_OVERFLOW),
    "context-overflow",
    VLLM_OVERFLOW,
  ],
  [
    "vLLM's other 400 (a template error, hand-written)",
    vllm(400, "BadRequestError", "Chat template error: 'str object' has no attribute 'items'"),
    "bad-request",
    "has no attribute 'items'",
  ],
  [
    "vLLM's 404 for a model it does not serve (hand-written)",
    vllm(404, "NotFoundError", "The model `tiny-qwen3` does not exist."),
    "unknown-model",
    "The model `tiny-qwen3` does not exist.",
  ],
  [
    "llama-server's 500 for history it cannot parse (recorded)",
    { recorded: "bad_args" },
    "bad-request",
    "Failed to parse tool call arguments as JSON",
  ],
];

describe("a refused model request is classified, explained and never retried", () => {
  for (const [what, step, cause, kept] of CASES) {
    it(`${what} → cause ${cause}, the server's message kept`, async () => {
      const h = upstreamHarness(upstream, orch);
      upstream.script([step]);
      const { events, settlement } = await h.run(`r1/coder/${cause}/${what.length}`, { turnId: "t-3" });
      expect(settlement).toMatchObject({ outcome: "failed", error: { cause } });
      const message = settlement.error?.message ?? "";
      expect(message).toContain(kept);
      expect(message).toContain(`${upstream.baseUrl}/chat/completions`);
      expect(message).toContain("model entry `sim`");
      expect(upstream.bodies).toHaveLength(1);
      expect(events.some((e) => e.type === "retry")).toBe(false);
      const warn = h.warns().find((l) => l.msg === "the Submission failed on the model side");
      expect(warn).toMatchObject({ turnId: "t-3", model: "sim", cause });
    });
  }
});
