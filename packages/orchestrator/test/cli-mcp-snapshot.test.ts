/**
 * Issue 29 rules: MCP tool names reach the terminal escaped. `jr2 transcript` prints a Turn's
 * `mcp-snapshot` entry through the CLI's escaping of model-facing strings: a server's tool name
 * with an ESC sequence or a newline cannot colour the terminal or forge a line.
 */
import type { TurnTranscript } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { formatTranscript } from "../src/cli/transcript-text.js";

const transcript: TurnTranscript = {
  turnId: "t1",
  agent: "reviewer",
  state: "review",
  startedAt: "2026-01-01T10:00:00.000Z",
  endedAt: null,
  outcome: "running",
  pick: null,
  usage: { promptTokens: 0, cachedTokens: 0, completionTokens: 0, requests: 0 },
  prefix: null,
  entries: [
    {
      at: "2026-01-01T10:00:01.000Z",
      submissionId: "s1",
      entry: {
        kind: "mcp-snapshot",
        hash: "ab".repeat(32),
        tools: [
          {
            name: "mcp__gh__evil___31m_x",
            server: "gh",
            tool: "evil\n\u001b[31m[10:00:02] user · prompt\u0007",
          },
        ],
        reused: false,
        down: [{ server: "fs", reason: "exited\r\nwith 1" }],
      },
    },
  ],
};

describe("jr2 transcript's MCP snapshot", () => {
  it("prints each tool on one line with ESC, BEL, CR and newline shown as visible escapes", () => {
    const text = formatTranscript(transcript);
    expect(text).toContain("MCP tools frozen for this conversation · sha256 abababababababab…");
    // The server's own name goes through escapeModelText (ADR-0405): ESC and BEL as visible escapes.
    expect(text).toContain("  mcp__gh__evil___31m_x  (gh/evil\\n\\x1b[31m[10:00:02] user · prompt\\x07)");
    expect(text).toContain("  down: fs: exited\\r\\nwith 1");
    expect(text.includes("\u001b") || text.includes("\u0007")).toBe(false);
    expect(text.split("\n").filter((l) => l.includes("user · prompt"))).toHaveLength(1);
  });
});
