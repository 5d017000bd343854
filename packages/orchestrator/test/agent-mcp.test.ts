/**
 * MCP servers on an Agent (issue 29): checked at load, carried in the admission's definition
 * with secrets by name only, and the skew rule — an older Harness that does not know `mcp`
 * refuses the admission with a coded 400 naming the key, and the Turn faults `bad-request`
 * naming the Harness's version.
 */
import { errorCodes, formatErrorMessage, Jr2Error } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { agent, defineEvent, jr2Setup } from "../src/index.js";
import { startFakeHarness } from "./fake-harness-server.js";
import { feedOf, hostOn, until } from "./host-on-fake-harness.js";

const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err instanceof Jr2Error ? `${err.code}: ${err.message}` : String(err);
  }
  return "no error";
};
const base = { model: "m", instructions: "Review.", workspace: "read" as const };

describe("agent({ mcp }) at load", () => {
  it("accepts stdio and Streamable HTTP servers with secrets by name", () => {
    expect(
      codeOf(() =>
        agent({
          ...base,
          mcp: {
            fs: { command: "mcp-server-filesystem", args: ["/work"] },
            gh: {
              url: "https://mcp.example/mcp",
              headers: { Authorization: { secret: "GH_MCP_TOKEN" } },
              required: true,
            },
            docs: { url: "http://127.0.0.1:9000/mcp", headers: { Accept: "application/json" } },
          },
        }),
      ),
    ).toBe("no error");
  });
  it.each([
    ["Authorization", "Bearer abc"],
    ["X-Api-Key", "anything"],
    ["X-Custom", "ghp_0123456789abcdefghijABCDEFGHIJ012345"],
    ["X-Custom", "k3y9a8b7c6d5e4f3g2h1i0jz"],
  ])("refuses a literal secret-looking header %s: %s, naming the server and the header", (header, value) => {
    const said = codeOf(() =>
      agent({ ...base, mcp: { gh: { url: "https://mcp.example/mcp", headers: { [header]: value } } } }),
    );
    expect(said).toMatch(/^JR2_ERR_SETUP_AGENT_MCP_LITERAL_SECRET: Agent MCP server `gh` header `/);
    expect(said).toContain(header);
    expect(said).toContain('{ secret: "ENV_NAME" }');
    expect(said).not.toContain(value);
  });
  it.each([
    ["the Harness's own bearer", "https://mcp.example/mcp", "JR2_HARNESS_TOKEN", /one of the Harness's own/],
    ["git's credential plumbing", "https://mcp.example/mcp", "GIT_ASKPASS", /one of the Harness's own/],
    [
      "a secret over plain http",
      "http://mcp.example/mcp",
      "GH_MCP_TOKEN",
      /neither https nor loopback; use https/,
    ],
  ])(
    "refuses a { secret } naming %s (ADR-0234), naming the server, the variable or the URL",
    (_w, url, name, why) => {
      const said = codeOf(() =>
        agent({ ...base, mcp: { gh: { url, headers: { Authorization: { secret: name } } } } }),
      );
      expect(said).toMatch(
        /^JR2_ERR_SETUP_AGENT_MCP_SECRET_REFUSED: Agent MCP server `gh` may not carry that secret: /,
      );
      expect(said).toMatch(why);
    },
  );
  it.each([
    ["a server name with `_`", { my_fs: { command: "x" } }, "my_fs"],
    ["neither command nor url", { fs: { args: ["x"] } }, "fs"],
    [
      "a secret reference that is not a variable name",
      { gh: { url: "https://x.example", headers: { A: { secret: "not a name" } } } },
      "gh",
    ],
    ["an unknown field", { fs: { command: "x", env: { A: "b" } } }, "fs"],
  ])("refuses %s, naming the server", (_what, mcp, server) => {
    expect(codeOf(() => agent({ ...base, mcp: mcp as never }))).toMatch(
      new RegExp(`^JR2_ERR_SETUP_AGENT_MCP_INVALID: Agent MCP server \`${server}\``),
    );
  });
  it("a Menu pick may not take an MCP tool's name (mcp__<server>__<tool>): refused naming it", () => {
    expect(codeOf(() => defineEvent({ name: "mcp__gh__create_issue", description: "x" }))).toMatch(
      /^JR2_ERR_SETUP_EVENT_NAME_RESERVED: .*mcp__gh__create_issue/,
    );
  });
});

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
const machine = jr2Setup({
  events: [finish],
  actors: {
    reviewer: agent({
      ...base,
      workspace: "none",
      mcp: { gh: { url: "https://mcp.example/mcp", headers: { Authorization: { secret: "GH_MCP_TOKEN" } } } },
    }),
  },
}).createMachine({
  initial: "reviewing",
  states: {
    reviewing: {
      invoke: { src: "reviewer", input: { prompt: "Review." } },
      on: { finish: "done", "agent.fault": "failed" },
    },
    done: { type: "final" },
    failed: { type: "final" },
  },
});

/** What a Harness that does not know `mcp` answers (its refuseUnknownDefinitionKeys hook). */
const olderHarnessRefusal = (version: string) => {
  const fields = { key: "mcp", version, known: "model, instructions, workspace, thinkingLevel" };
  return {
    error: formatErrorMessage(errorCodes.JR2_ERR_DEFINITION_KEY_UNKNOWN.message, fields),
    code: "JR2_ERR_DEFINITION_KEY_UNKNOWN",
    ...fields,
  };
};

describe("a required MCP server down at conversation start (issue 29 item 4)", () => {
  it("the Harness's `mcp-unavailable` settlement faults the Turn infra / mcp-unavailable, the server named", async () => {
    const message =
      "required MCP server `gh` (connect ECONNREFUSED 127.0.0.1:9) is down as the conversation starts";
    const fake = await startFakeHarness({
      script: () => ({
        kind: "events",
        events: [
          {
            type: "submission-settled",
            outcome: "failed",
            error: { type: "mcp", cause: "mcp-unavailable", message },
          },
        ],
      }),
    });
    const host = hostOn(fake, machine);
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    const [fault] = await feedOf(host, runId, "fault");
    expect(fault).toMatchObject({ reason: "infra", cause: "mcp-unavailable", detail: message });
    await host.close();
    await fake.close();
  });
});

describe("definition skew (issue 29 rules)", () => {
  it("the definition carries `mcp` with secrets by name; an older Harness's coded 400 faults the Turn bad-request naming its version and the key", async () => {
    const fake = await startFakeHarness({
      script: ({ body }) =>
        "mcp" in body.definition
          ? { kind: "refuse", status: 400, body: olderHarnessRefusal("0.0.9") }
          : { kind: "events", events: [] },
    });
    const host = hostOn(fake, machine);
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect(fake.admissions[0]!.body.definition.mcp).toEqual({
      gh: { url: "https://mcp.example/mcp", headers: { Authorization: { secret: "GH_MCP_TOKEN" } } },
    });
    expect((await host.getRun(runId)).value).toBe("failed");
    const [fault] = await feedOf(host, runId, "fault");
    expect(fault).toMatchObject({ reason: "infra", cause: "bad-request" });
    expect(String(fault?.detail)).toContain("Harness version 0.0.9");
    expect(String(fault?.detail)).toContain("`mcp`");
    await host.close();
    await fake.close();
  });
});
