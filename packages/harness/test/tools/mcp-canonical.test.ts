/** The MCP snapshot's canonical form (issue 29 item 3): names, order, schema keys, hash. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { mcpResultCutNote } from "../../src/presenters/menu.js";
import { canonicalToolName, canonicalTools, snapshotOf, stableKeys } from "../../src/tools/mcp/canonical.js";
import { installAtStartProblem } from "../../src/tools/mcp/install-at-start.js";
import { bounded, MCP_RESULT_MAX_BYTES } from "../../src/tools/mcp/mcp-tools.js";

describe("canonical MCP tool names", () => {
  it("are mcp__<server>__<tool> with characters outside [A-Za-z0-9_-] made _", () => {
    expect(canonicalToolName("gh", "issues.list")).toBe("mcp__gh__issues_list");
    expect(canonicalToolName("fs", "read file\n\u001b[31m")).toBe("mcp__fs__read_file___31m");
    expect(canonicalToolName("fs", "é/x")).toBe("mcp__fs____x");
  });
  it("a name over 64 characters is cut to 55 + _ + 8 hex of the sha256 of the uncut name", () => {
    const tool = "a".repeat(80);
    const full = `mcp__srv__${tool}`;
    const name = canonicalToolName("srv", tool);
    expect(name).toHaveLength(64);
    expect(name).toBe(`${full.slice(0, 55)}_${createHash("sha256").update(full).digest("hex").slice(0, 8)}`);
    expect(canonicalToolName("srv", `${tool}b`)).not.toBe(name);
    expect(canonicalToolName("srv", "a".repeat(54))).toHaveLength(64); // exactly 64: uncut
  });
});

describe("the snapshot", () => {
  const listed = [
    {
      name: "zeta",
      description: "Z",
      inputSchema: { type: "object", properties: { b: { type: "string" }, a: {} } },
    },
    {
      name: "alpha",
      description: "A",
      inputSchema: { properties: {}, type: "object" },
      annotations: { x: 1 },
      _meta: { t: 1 },
    },
  ];
  it("is sorted by name with schema keys in stable order, volatile fields dropped, order-free hash", () => {
    const one = snapshotOf(canonicalTools("s", listed)).snapshot;
    const two = snapshotOf(
      canonicalTools(
        "s",
        [...listed].reverse().map((t) => ({ ...t, _meta: { t: 2 } })),
      ),
    ).snapshot;
    expect(one.tools.map((t) => t.name)).toEqual(["mcp__s__alpha", "mcp__s__zeta"]);
    expect(JSON.stringify(one.tools[1]!.inputSchema)).toBe(
      '{"properties":{"a":{},"b":{"type":"string"}},"type":"object"}',
    );
    expect(Object.keys(one.tools[0]!)).toEqual(["name", "server", "tool", "description", "inputSchema"]);
    expect(two.hash).toBe(one.hash);
    expect(JSON.stringify(two.tools)).toBe(JSON.stringify(one.tools));
    const changed = snapshotOf(
      canonicalTools("s", [{ ...listed[0]!, description: "Z2" }, listed[1]!]),
    ).snapshot;
    expect(changed.hash).not.toBe(one.hash);
  });
  it("tools whose canonical names collide are both left out and reported", () => {
    const { snapshot, collisions } = snapshotOf(
      canonicalTools("s", [{ name: "a.b" }, { name: "a_b" }, { name: "c" }]),
    );
    expect(snapshot.tools.map((t) => t.name)).toEqual(["mcp__s__c"]);
    expect(collisions).toEqual([{ name: "mcp__s__a_b", first: "s/a.b", second: "s/a_b" }]);
  });
  it("stableKeys keeps array order", () => {
    expect(JSON.stringify(stableKeys({ b: [3, { d: 1, c: 2 }], a: 1 }))).toBe(
      '{"a":1,"b":[3,{"c":2,"d":1}]}',
    );
  });
});

describe("install-at-start forms are refused with the reason", () => {
  it.each([
    ["npx", ["-y", "@modelcontextprotocol/server-everything"]],
    ["/usr/bin/npx", ["pkg"]],
    ["pnpm", ["dlx", "pkg"]],
    ["uvx", ["mcp-server-fetch"]],
    ["npm", ["exec", "pkg"]],
    ["pipx", ["run", "pkg"]],
  ])("%s %j", (command, args) => {
    expect(installAtStartProblem(command, args)).toMatch(/installs the server when it starts.*no network/);
  });
  it("an installed binary runs", () => {
    expect(installAtStartProblem("node", ["/opt/server/index.js"])).toBeUndefined();
    expect(installAtStartProblem("mcp-server-everything", [])).toBeUndefined();
  });
});

describe("MCP results are bounded", () => {
  it("a result over the bound is cut at a character boundary and the cut is said", () => {
    const text = "é".repeat(MCP_RESULT_MAX_BYTES);
    const out = bounded(text, mcpResultCutNote);
    expect(out).toMatch(/\[result cut: \d+ of 65536 bytes shown; ask the tool for less\]$/);
    expect(out).not.toContain("\uFFFD");
    expect(bounded("short", mcpResultCutNote)).toBe("short");
  });
});
