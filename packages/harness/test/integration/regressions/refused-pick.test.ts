/**
 * Regression: a pick the Orchestrator refused with a coded 400 (e.g. arguments holding a
 * `__proto__` key) got the "may not have reached the workflow" receipt, as if the connection
 * had failed. Root cause: orchestrator-client treated every non-2xx but 404 as a transport
 * failure. Fixed: a 400 whose body carries a JR2 code is an answer (`refused`) — the model
 * reads an invalid-arguments receipt naming the problem, with the Allowed picks it last read.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../fixtures/fake-openai.js";
import { answer, type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { harnessFor, parsed } from "../../fixtures/harness.js";

let model: FakeOpenAI;
let orch: FakeOrchestrator;
beforeEach(async () => {
  model = await startFakeOpenAI();
  orch = await startFakeOrchestrator();
});
afterEach(async () => {
  await model.close();
  await orch.close();
});

/** The tool result the model read for its first pick (in the second request). */
const firstReceipt = () => {
  const messages = parsed(model)[1]!.messages;
  return JSON.stringify(messages.find((m) => m.role === "tool")?.content);
};

describe("a coded 400 on a pick", () => {
  it("a `__proto__` key: an invalid-arguments receipt naming the key, sent once, Turn open", async () => {
    const h = harnessFor(model, orch);
    let posts = 0;
    orch.answer = () => {
      posts++;
      if (posts === 1)
        return {
          status: 400,
          body: {
            error: "the request body is not valid JSON: Body is not valid JSON",
            code: "JR2_ERR_REQUEST_MALFORMED_JSON",
          },
        };
      return answer({ allowed: [], turnComplete: true });
    };
    model.script([
      { toolCalls: [{ name: "approve", arguments: '{"summary":"ok","__proto__":{"admin":true}}' }] },
      { toolCalls: [{ name: "approve", arguments: '{"summary":"ok"}' }] },
    ]);
    const { settlement, events } = await h.run("r1/proto");
    expect(settlement.outcome).toBe("completed");
    expect(posts).toBe(2);
    const receipt = firstReceipt();
    expect(receipt).toContain("was refused because its arguments are invalid");
    expect(receipt).toContain("__proto__");
    expect(receipt).toContain("Allowed now: approve, request_changes.");
    expect(receipt).not.toContain("may not have reached");
    const pick = events.find((e) => e.type === "pick");
    expect(pick).toMatchObject({ answer: { delivered: false, refusal: "invalid-arguments" } });
  });

  it("a coded 400 with issues names them; an uncoded 400 stays a transport failure", async () => {
    const h = harnessFor(model, orch);
    let posts = 0;
    orch.answer = () => {
      posts++;
      if (posts === 1)
        return {
          status: 400,
          body: {
            error: "invalid request: arguments: too deep",
            code: "JR2_ERR_REQUEST_INVALID",
            issues: [{ path: "/arguments/summary", message: "nested too deeply" }],
          },
        };
      if (posts === 2) return { status: 400, body: { message: "bad" } };
      return answer({ allowed: [], turnComplete: true });
    };
    model.script([
      { toolCalls: [{ name: "approve", arguments: '{"summary":"a"}' }] },
      { toolCalls: [{ name: "approve", arguments: '{"summary":"b"}' }] },
      { toolCalls: [{ name: "approve", arguments: '{"summary":"c"}' }] },
    ]);
    const { settlement } = await h.run("r1/issues");
    expect(settlement.outcome).toBe("completed");
    expect(firstReceipt()).toContain("arguments.summary: nested too deeply");
    const third = JSON.stringify(parsed(model)[2]!.messages);
    expect(third).toContain("may not have reached the workflow");
  });
});
