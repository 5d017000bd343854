/**
 * Issue 29 item 2–3: a rebuilt conversation (after a Harness restart) reuses the snapshot its
 * store holds — the tools block keeps its bytes even though the server now lists other tools —
 * says the drift, and answers a call of a tool the server dropped with the vanished-tool
 * receipt. Real Streamable HTTP server on 127.0.0.1; the store is the in-memory port the
 * durable store implements.
 */
import { describe, expect, it } from "vitest";
import {
  mcpCallFailedReceipt,
  mcpResultCutNote,
  mcpServerDownReceipt,
  mcpToolGoneReceipt,
} from "../../src/presenters/menu.js";
import { openMcpSession } from "../../src/tools/mcp/mcp-session.js";
import { mcpAgentTools } from "../../src/tools/mcp/mcp-tools.js";
import { memorySnapshotStore } from "../../src/tools/mcp/snapshot-store.js";
import { createRedactor } from "../../src/tools/secret-redaction.js";
import { startMcpHttpServer } from "../fixtures/mcp-http-server.js";

const texts = {
  gone: mcpToolGoneReceipt,
  down: mcpServerDownReceipt,
  failed: mcpCallFailedReceipt,
  cut: mcpResultCutNote,
};

describe("a rebuilt conversation reuses its stored MCP snapshot", () => {
  it("same tools block after a restart, the drift said, a dropped tool answered with its receipt", async () => {
    const server = await startMcpHttpServer();
    const store = memorySnapshotStore();
    const open = () =>
      openMcpSession({
        iid: "r1/rev/aa",
        servers: { docs: { url: server.url } },
        cwd: undefined,
        access: "none",
        context: { environment: {}, secrets: createRedactor([]) },
        store,
      });
    const first = await open();
    expect(first.reused).toBe(false);
    expect(first.drifted).toBeUndefined();
    const before = JSON.stringify(first.snapshot);
    await first.close();

    await server.remove("lookup"); // the server changed while the Harness was down
    const rebuilt = await open();
    expect(rebuilt.reused).toBe(true);
    expect(JSON.stringify(rebuilt.snapshot)).toBe(before);
    expect(rebuilt.drifted).toMatch(/^[0-9a-f]{64}$/);
    const warned: string[] = [];
    const tools = mcpAgentTools(rebuilt, createRedactor([]), (m) => warned.push(m), texts);
    const lookup = tools.find((t) => t.name === "mcp__docs__lookup")!;
    const result = await lookup.execute("c1", { word: "Turn" });
    expect(result.content).toEqual([
      { type: "text", text: "`mcp__docs__lookup` is no longer offered by its server; nothing ran." },
    ]);
    expect(warned).toEqual(["MCP tool no longer offered by its server"]);
    expect(server.calls).not.toContain("lookup");
    await rebuilt.close();
    await server.close();
  });
});
