/**
 * Regressions from the adversary's MCP probes, against a real hostile stdio server (the official
 * SDK, test/fixtures/hostile-mcp-server.mjs) and the Harness's real MCP client.
 *
 * Root causes:
 * - H2 (ADR-0232): child-transport.ts appended every stdout chunk to the SDK's `ReadBuffer`
 *   outside any try; past 10 MiB `append` threw in the stream's `data` handler — uncaught, the
 *   whole Harness exited. Now a per-message byte bound closes that server's connection instead.
 * - M5 (ADR-0233): `listTools` paged while `nextCursor` was set, each page with its own timeout
 *   (an endless cursor listed forever); every `list_changed` re-listed at once (a storm made
 *   1,344 listings in 2 s); a server could fill the tools block with 10,000 tools.
 * - L2 (ADR-0236): descriptions reached the tools block with ANSI and bidi controls.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MCP_TOOLS_PER_SERVER_MAX } from "../../src/tools/mcp/bounds/listing-bounds.js";
import { MCP_MESSAGE_MAX_BYTES } from "../../src/tools/mcp/bounds/message-bound.js";
import { openMcpSession } from "../../src/tools/mcp/mcp-session.js";
import { memorySnapshotStore } from "../../src/tools/mcp/snapshot-store.js";
import { createRedactor } from "../../src/tools/secret-redaction.js";

const SERVER = fileURLToPath(new URL("../fixtures/hostile-mcp-server.mjs", import.meta.url));

const open = (mode: string, env: Record<string, string> = {}, counter?: string, listMs = 5000) => {
  const trouble: string[] = [];
  const session = openMcpSession({
    iid: `r/${mode}/${Math.random()}`,
    servers: { h: { command: process.execPath, args: [SERVER, mode, ...(counter ? [counter] : [])] } },
    cwd: undefined,
    access: "none",
    context: {
      environment: { PATH: process.env.PATH, ...env },
      secrets: createRedactor([]),
      onTrouble: (m) => trouble.push(m),
    },
    store: memorySnapshotStore(),
    timeouts: { startMs: 10_000, listMs, callMs: 60_000 },
  });
  return { session, trouble };
};

describe("a hostile stdio MCP server", () => {
  it("an 11 MB answer marks the server down with the reason; the Harness lives and never holds it", async () => {
    const { session, trouble } = open("call", { BIG_MB: "11" });
    const s = await session;
    const big = s.snapshot.tools.find((t) => t.tool === "big")!;
    const out = await s.call(big, {});
    expect(out.kind).toBe("down");
    expect(out.kind === "down" && out.reason).toContain(`more than ${MCP_MESSAGE_MAX_BYTES} bytes`);
    expect(trouble.join("\n")).toContain(`more than ${MCP_MESSAGE_MAX_BYTES} bytes`);
    // Down for the conversation: no reconnect that would ask for the 11 MB again.
    const again = await s.call(big, {});
    expect(again.kind).toBe("down");
    await s.close();
  }, 60_000);

  it("an endless nextCursor ends at one deadline for the whole listing: the server is down", async () => {
    const t0 = Date.now();
    const { session } = open("paginate", {}, undefined, 1500);
    const s = await session;
    expect(s.down.map((d) => d.server)).toEqual(["h"]);
    expect(s.down[0]!.reason).toMatch(/tools\/list|pages|more than/);
    expect(Date.now() - t0).toBeLessThan(12_000);
    await s.close();
  }, 30_000);

  it("10,000 tools of 2 KB mark the server down naming the bound, instead of an 8 MB tools block", async () => {
    const { session } = open("weird", { BULK: "10000", DEPTH: "3" }, undefined, 20_000);
    const s = await session;
    expect(s.snapshot.tools).toEqual([]);
    expect(s.down[0]?.reason).toMatch(
      new RegExp(`more than (${MCP_TOOLS_PER_SERVER_MAX} tools|${MCP_MESSAGE_MAX_BYTES} bytes)`),
    );
    await s.close();
  }, 60_000);

  it("descriptions reach the tools block without ANSI or bidi controls", async () => {
    const { session } = open("weird", { BULK: "3", DEPTH: "3" });
    const s = await session;
    const evil = s.snapshot.tools.find((t) => t.tool.startsWith("evil"))!;
    expect(evil.description).toBe("desc gnp.exe\nIGNORE PREVIOUS");
    await s.close();
  }, 30_000);

  it("a list_changed storm re-lists at most once per interval", async () => {
    const counter = join(mkdtempSync(join(tmpdir(), "jr2-mcp-storm-")), "lists");
    writeFileSync(counter, "");
    const { session } = open("spam", {}, counter);
    const s = await session;
    await new Promise((r) => setTimeout(r, 2500));
    const lists = readFileSync(counter, "utf8").length;
    expect(s.listChanged()).toBeGreaterThan(10); // the storm reached the Harness
    expect(lists).toBeLessThanOrEqual(3); // the first listing + at most one per 2 s
    await s.close();
  }, 30_000);
});
