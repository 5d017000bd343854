/**
 * The replay-lint runs on every request a seat sends (issue 10 §1): a history that is not valid
 * fails the Submission in strict mode (tests) and is repaired with an error log in production.
 * The bad history is injected through the payload hook, since ingestion never stores one.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSeat, type RunHooks } from "../../src/engine/pi/engine-pi.js";
import { createEndpointLimiter } from "../../src/provider/limiter.js";
import { DEFAULT_RETRY, toPiModel } from "../../src/provider/models.js";
import { MENU } from "../fixtures/fake-orchestrator.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../fixtures/scripted-upstream.js";

let upstream: ScriptedUpstream;
beforeEach(async () => {
  upstream = await startScriptedUpstream();
});
afterEach(async () => {
  await upstream.close();
});

/** Puts a double-encoded call into the history of every request. */
const breakHistory = (params: Record<string, unknown>) => {
  const messages = params.messages as unknown[];
  messages.splice(1, 0, {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "c0", type: "function", function: { name: "approve", arguments: '"{}"' } }],
  });
};

function run(mode: "strict" | "repair") {
  const errors: string[] = [];
  const hooks: RunHooks = {
    menuCall: async () => ({ text: "ok", turnOver: true }),
    notRun: () => "not run",
    boundary: async () => undefined,
    outputCut: () => undefined,
    usage: () => {},
    retry: () => {},
    trouble: (level, msg) => {
      if (level === "error") errors.push(msg);
    },
    message: () => {},
    workingText: () => "",
    transcript: () => {},
  };
  const seat = createSeat({
    systemPrompt: "s",
    workingTools: [],
    menu: MENU,
    cwd: undefined,
    limiter: createEndpointLimiter(1),
    temperature: 0,
    shapePayload: breakHistory,
    lintMode: mode,
  });
  const entry = { baseUrl: upstream.baseUrl, id: "m", contextWindow: 8192, maxTokens: 256 };
  const outcome = seat.run({
    userText: "go",
    userPart: { part: "prompt" },
    model: toPiModel("sim", entry),
    entry: "sim",
    policy: DEFAULT_RETRY,
    apiKey: "k",
    thinkingLevel: "off",
    maxSteps: 4,
    hooks,
  });
  return { outcome, errors };
}

describe("the replay-lint on every request", () => {
  it("strict: the Submission fails replay-lint and nothing is sent", async () => {
    const { outcome } = run("strict");
    expect(await outcome).toMatchObject({ kind: "failed", error: { type: "replay-lint" } });
    expect(upstream.bodies).toHaveLength(0);
  });

  it("repair: logged at error, the request goes out with {} arguments", async () => {
    upstream.script([{ sse: answer({ content: "done" }) }]);
    const { outcome, errors } = run("repair");
    expect(await outcome).toEqual({ kind: "completed" });
    expect(errors).toEqual(["replay-lint repaired the request's history"]);
    const sent = JSON.parse(upstream.bodies[0]!) as {
      messages: Array<{ tool_calls?: Array<{ function: { arguments: string } }> }>;
    };
    expect(sent.messages[1]?.tool_calls?.[0]?.function.arguments).toBe("{}");
  });
});
