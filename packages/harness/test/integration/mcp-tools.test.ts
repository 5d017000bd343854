/**
 * MCP tools on an Agent (issue 29), through the real Harness with REAL MCP servers: the npm
 * package `@modelcontextprotocol/server-everything` over stdio (a process per conversation) and
 * a Streamable HTTP server of our own on 127.0.0.1 (the SDK's server; it reorders `tools/list`
 * every time, drops its sessions on demand and stops offering a tool on demand). The model side
 * is the scripted fake OpenAI server, which records every request body byte for byte.
 */
import { chmodSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { SANDBOX_HOME } from "@jr2/sandbox";
import type { StreamEvent } from "@jr2/wire";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decideSandbox } from "../../src/tools/sandbox/working-sandbox.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fixtures/fake-openai.js";
import { answer, type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";
import { harnessFor } from "../fixtures/harness.js";
import { type McpHttpFixture, startMcpHttpServer } from "../fixtures/mcp-http-server.js";

const EVERYTHING = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);
const SECRET = "glossary-7f3a9c2e51d84b6a9e0f";
const call = (name: string, args: unknown = {}) => ({ name, arguments: JSON.stringify(args) });

let model: FakeOpenAI;
let orch: FakeOrchestrator;
let glossary: McpHttpFixture;
beforeEach(async () => {
  model = await startFakeOpenAI();
  orch = await startFakeOrchestrator();
  glossary = await startMcpHttpServer({ token: SECRET });
});
afterEach(async () => {
  await model.close();
  await orch.close();
  await glossary.close();
});

const definition = (extra: Record<string, unknown> = {}) => ({
  model: "sim",
  instructions: "You review code.",
  workspace: "none",
  mcp: {
    everything: { command: process.execPath, args: [EVERYTHING, "stdio"] },
    glossary: { url: glossary.url, headers: { Authorization: { secret: "GLOSSARY_MCP_TOKEN" } } },
    ...extra,
  },
});
/** The Harness's log lines (pino JSON), for the warn lines and the secret check. */
let logLines: string[] = [];
const harness = () => {
  logLines = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  return harnessFor(model, orch, {
    environment: {
      GLOSSARY_MCP_TOKEN: `Bearer ${SECRET}`,
      JR2_MCP_SECRETS: "GLOSSARY_MCP_TOKEN",
      PATH: process.env.PATH,
    },
    logger: { level: "info", stream: sink } as never,
  });
};
const toolsOf = () => model.bodies.map((b) => JSON.stringify((JSON.parse(b) as { tools: unknown }).tools));
const toolNames = (i = 0) =>
  (JSON.parse(model.bodies[i]!) as { tools: Array<{ function: { name: string } }> }).tools.map(
    (t) => t.function.name,
  );
const toolResults = (i: number) =>
  (JSON.parse(model.bodies[i]!) as { messages: Array<{ role: string; content: unknown }> }).messages
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));

describe("MCP tools on an Agent", () => {
  it("the tools block is Working + MCP snapshot (sorted, canonical names) + Menu, byte-identical across reorder, reconnect and a vanished tool; results redacted; the snapshot reaches the transcript", async () => {
    const h = harness();
    orch.answer = () =>
      answer({ allowed: ["approve", "request_changes", "finish"], turnComplete: false, moved: true });
    model.script([
      { toolCalls: [call("mcp__everything__echo", { message: "hello from the model" })] },
      { toolCalls: [call("mcp__glossary__lookup", { word: "Turn" })] },
      { toolCalls: [call("mcp__glossary__secret_echo", { text: "show me" })] },
      { text: "done for now" },
    ]);
    const first = await h.run("r1/coder/aa", { definition: definition() });
    expect(first.settlement.outcome).toBe("completed");

    const names = toolNames();
    const mcp = names.filter((n) => n.startsWith("mcp__"));
    expect(mcp).toEqual([...mcp].sort());
    expect(mcp).toContain("mcp__everything__echo");
    expect(mcp).toContain("mcp__glossary__count_words"); // `count.words` made canonical
    expect(names.slice(-3)).toEqual(["approve", "request_changes", "finish"]);
    expect(toolResults(1)[0]).toContain("hello from the model");
    expect(toolResults(2).at(-1)).toContain("Turn: a term of the glossary.");
    // The server echoed the credential it received: the model reads `[redacted]`.
    expect(toolResults(3).at(-1)).toContain("[redacted]");
    expect(glossary.authorizations).toContain(`Bearer ${SECRET}`);
    const snapshot = first.events.find(
      (e): e is Extract<StreamEvent, { type: "transcript" }> =>
        e.type === "transcript" && e.entry.kind === "mcp-snapshot",
    );
    expect(snapshot?.entry).toMatchObject({ kind: "mcp-snapshot", reused: false, down: [] });

    // Between Submissions: the HTTP server forgets its sessions and closes its sockets, then
    // stops offering `count.words` (its list_changed reaches nobody: the connection is gone).
    glossary.drop();
    await glossary.remove("count.words");
    const listsBefore = glossary.lists;
    model.script([
      { toolCalls: [call("mcp__glossary__lookup", { word: "Gate" })] },
      { toolCalls: [call("mcp__glossary__count_words", { text: "one two" })] },
      { text: "done" },
    ]);
    const before = model.bodies.length;
    const second = await h.run("r1/coder/aa", { definition: definition() });
    expect(second.settlement.outcome).toBe("completed");
    expect(glossary.lists).toBeGreaterThan(listsBefore); // it reconnected and listed again
    expect(toolResults(before + 1).at(-1)).toContain("Gate: a term of the glossary.");
    expect(toolResults(before + 2).at(-1)).toBe(
      "`mcp__glossary__count_words` is no longer offered by its server; nothing ran.",
    );
    expect(glossary.calls).not.toContain("count.words");
    // Every request of the conversation carried the same tools bytes.
    expect(new Set(toolsOf()).size).toBe(1);
    // server-everything's list_changed (it registers client-dependent tools after initialize)
    // reached the Harness, and changed nothing above; the vanished tool got one warn line.
    expect(logLines.join("")).toContain("MCP server announced tools/list_changed");
    expect(logLines.filter((l) => l.includes("MCP tool no longer offered by its server"))).toHaveLength(1);
    expect(logLines.find((l) => l.includes("no longer offered"))).toContain('"server":"glossary"');
    // The secret is nowhere the Orchestrator, the model or the log could see it.
    const everything =
      JSON.stringify([...first.events, ...second.events]) + model.bodies.join("") + logLines.join("");
    expect(everything).not.toContain(SECRET);
    await h.app.close();
  }, 60_000);

  it("a new conversation lists again: the same servers in another order give the same snapshot hash", async () => {
    const h = harness();
    orch.answer = () => answer({ allowed: [], turnComplete: true });
    const hashes: string[] = [];
    for (const iid of ["r1/coder/a1", "r1/coder/a2", "r1/coder/a3"]) {
      model.script([{ toolCalls: [call("approve", { summary: "ok" })] }]);
      const { events } = await h.run(iid, { definition: definition() });
      const entry = events.find((e) => e.type === "transcript" && e.entry.kind === "mcp-snapshot");
      if (entry?.type === "transcript" && entry.entry.kind === "mcp-snapshot") hashes.push(entry.entry.hash);
    }
    expect(hashes).toHaveLength(3);
    expect(new Set(hashes).size).toBe(1);
    expect(new Set(toolsOf()).size).toBe(1);
    await h.app.close();
  }, 60_000);

  it("a server that cannot start is a receipt and a warn line; `required` and down faults the Turn `mcp-unavailable`; `npx -y` is refused with the reason", async () => {
    const h = harness();
    orch.answer = () => answer({ allowed: [], turnComplete: true });
    model.script([{ toolCalls: [call("approve", { summary: "ok" })] }]);
    const ok = await h.run("r1/coder/b1", {
      definition: definition({
        fetcher: { command: "npx", args: ["-y", "@modelcontextprotocol/server-fetch"] },
      }),
    });
    expect(ok.settlement.outcome).toBe("completed");
    const snap = ok.events.find((e) => e.type === "transcript" && e.entry.kind === "mcp-snapshot");
    expect(JSON.stringify(snap)).toContain("installs the server when it starts");

    const down = await h.run("r1/coder/b2", {
      definition: definition({ gone: { url: "http://127.0.0.1:9/mcp", required: true } }),
    });
    expect(down.settlement).toMatchObject({
      outcome: "failed",
      error: { type: "mcp", cause: "mcp-unavailable", message: expect.stringContaining("`gone`") },
    });
    await h.app.close();
  }, 60_000);

  it("a stdio server runs in the run's sandbox (spawnService): the sandbox's HOME, the Harness's secrets scrubbed from its environment", async () => {
    const sandbox = await decideSandbox({});
    if (sandbox.mode !== "on") throw new Error(`bwrap is needed here: ${JSON.stringify(sandbox)}`);
    const cwd = mkdtempSync(join(tmpdir(), "jr2-mcp-sandbox-"));
    chmodSync(cwd, 0o755); // the sandbox's user enters the Worktree
    const h = harnessFor(model, orch, {
      sandbox,
      environment: {
        GLOSSARY_MCP_TOKEN: `Bearer ${SECRET}`,
        JR2_MCP_SECRETS: "GLOSSARY_MCP_TOKEN",
        // The work root is the Harness's (default /work); this checkout may live under /work,
        // and a server installed inside the work root is refused its bind (ADR-0235).
        JR2_WORK_ROOT: mkdtempSync(join(tmpdir(), "jr2-mcp-work-")),
        PATH: process.env.PATH,
      },
    });
    orch.answer = () => answer({ allowed: [], turnComplete: true });
    model.script([
      { toolCalls: [call("mcp__everything__get-env")] },
      { toolCalls: [call("approve", { summary: "ok" })] },
    ]);
    const { settlement, events } = await h.run("r1/coder/s1", {
      cwd,
      definition: { ...definition(), workspace: "read", mcp: { everything: definition().mcp.everything } },
    });
    expect(settlement.outcome).toBe("completed");
    const snap = events.find((e) => e.type === "transcript" && e.entry.kind === "mcp-snapshot");
    expect(JSON.stringify(snap)).toContain('"down":[]');
    const env = toolResults(1).at(-1) ?? "";
    expect(env).toContain(`"HOME": "${SANDBOX_HOME}"`);
    expect(env).not.toContain("GLOSSARY_MCP_TOKEN");
    expect(env).not.toContain(SECRET);
    await h.app.close();
  }, 60_000);

  it("a definition key this Harness does not know is refused: coded 400 naming the key and the Harness's version", async () => {
    const h = harness();
    const res = await h.admit("r1/coder/c1", {
      definition: { model: "sim", instructions: "x", workspace: "none", approvals: { bash: "ask" } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "JR2_ERR_DEFINITION_KEY_UNKNOWN" });
    expect(res.json().error).toContain("`approvals`");
    expect(res.json().error).toMatch(/version \d+\.\d+\.\d+/);
    await h.app.close();
  });
});
