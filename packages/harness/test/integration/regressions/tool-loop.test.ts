/**
 * Regression (issue 25 §12): the same Working-tool call repeated ended the Turn at the 4th
 * identical call with no warning to the model and no `cause` (SPEC §5.6's identical-calls rule).
 * Fixed: at the 3rd identical call in a row the tool result carries one line (menu.ts) saying so;
 * at the 5th the Submission fails `runaway` with cause `tool-loop`, before that call runs. Picks
 * keep their own rule (four answers in a row with the same picks, issue 25 §1).
 * Bytes: hand-written OpenAI tool-call stream (`ls {"path":"."}` each answer).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../../fixtures/scripted-upstream.js";
import { messagesOf, upstreamHarness } from "../../fixtures/upstream-harness.js";

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

const ls = { sse: answer({ toolCalls: [{ name: "ls", arguments: '{"path":"."}' }] }) };

describe("the same Working-tool call in a row", () => {
  it("is warned at the 3rd (one line in its result) and ends runaway/tool-loop at the 5th, which never runs", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "jr2-tool-loop-"));
    writeFileSync(join(cwd, "README.md"), "# x\n");
    upstream.script([ls, ls, ls, ls, ls, ls, { sse: answer({ content: "done" }) }]);
    const h = upstreamHarness(upstream, orch);
    const { settlement } = await h.run("r1/coder/tool-loop", {
      definition: { model: "sim", instructions: "You review code.", workspace: "read" },
      cwd,
    });
    expect(settlement).toMatchObject({ outcome: "failed", error: { type: "runaway", cause: "tool-loop" } });
    expect(settlement.error?.message).toContain("5 times in a row");
    expect(upstream.bodies).toHaveLength(5);
    const results = messagesOf(upstream.bodies[4]!)
      .filter((m) => m.role === "tool")
      .map((m) => String(m.content));
    expect(results).toHaveLength(4);
    const noted = results.map((r) => r.includes("you have made this exact call"));
    expect(noted).toEqual([false, false, true, false]);
    expect(results[2]).toContain("README.md");
    expect(h.warns().filter((l) => String(l.msg).includes("3 times in a row"))).toHaveLength(1);
  });
});
