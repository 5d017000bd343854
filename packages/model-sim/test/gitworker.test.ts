/**
 * `gitworker:N` (ADR-0229): `worker:N`'s Working-tool calls, then one `bash` call running the
 * Agent's git (`git status`, `git log -1`) — so a newcomer sees the sandboxed git without a real
 * model — then the pick. An Agent without `bash` (a reader) is never asked to run it.
 */
import { buildModelSim } from "@jr2/model-sim";
import { afterAll, describe, expect, it } from "vitest";
import { GIT_COMMAND } from "../src/policies.js";
import {
  assemble,
  assistantCall,
  chat,
  lsTool,
  menu,
  sseFrames,
  streamed,
  systemMessage,
  toolResult,
  userTurn,
} from "./fixtures.js";

const { app } = buildModelSim();
afterAll(() => app.close());

const bashTool = {
  type: "function",
  function: {
    name: "bash",
    description: "Run a shell command.",
    parameters: {
      type: "object",
      properties: { command: { type: "string" }, timeout: { type: "number" } },
      required: ["command"],
    },
  },
};
const turn = [systemMessage, userTurn("Allowed now: approve, request_changes.")];

async function calls(model: string, messages: unknown[], tools: unknown[]) {
  const res = await chat(app, streamed(model, messages, tools));
  expect(res.statusCode).toBe(200);
  return assemble(sseFrames(res.payload)).calls.map((c) => [c.name, JSON.parse(c.arguments)]);
}

describe("gitworker", () => {
  it("gitworker:1 calls a Working tool, then bash with the git command, then picks", async () => {
    const tools = [lsTool, bashTool, ...menu];
    expect(await calls("gitworker:1", turn, tools)).toEqual([["ls", { path: "." }]]);
    const afterLs = [...turn, assistantCall("w1", "ls", { path: "." }), toolResult("w1", "src/")];
    expect(await calls("gitworker:1", afterLs, tools)).toEqual([["bash", { command: GIT_COMMAND }]]);
    expect(GIT_COMMAND).toBe("git status --short --branch && git log -1 --oneline");
    const afterGit = [
      ...afterLs,
      assistantCall("w2", "bash", { command: GIT_COMMAND }),
      toolResult("w2", "## jr2/review/run-1\n?? jr2-worker.txt\nabc1234 base"),
    ];
    expect((await calls("gitworker:1", afterGit, tools)).map(([name]) => name)).toEqual(["approve"]);
  });

  it("runs git again in a later Turn (after a newer user message), and never without a bash tool", async () => {
    const tools = [bashTool, ...menu];
    const earlier = [
      ...turn,
      assistantCall("w1", "bash", { command: GIT_COMMAND }),
      toolResult("w1", "## main"),
      assistantCall("p1", "approve", { summary: "ok" }),
      toolResult("p1", "Delivered."),
      userTurn("Address the review comments. Allowed now: approve."),
    ];
    expect(await calls("gitworker:0", earlier, tools)).toEqual([["bash", { command: GIT_COMMAND }]]);
    expect((await calls("gitworker:0", turn, menu)).map(([name]) => name)).toEqual(["approve"]);
  });

  it("is listed by GET /v1/models beside worker", async () => {
    const res = await app.inject({ url: "/v1/models" });
    const ids = (res.json() as { data: Array<{ id: string }> }).data.map((m) => m.id);
    expect(ids).toContain("gitworker");
    expect(ids).toContain("worker");
  });
});
