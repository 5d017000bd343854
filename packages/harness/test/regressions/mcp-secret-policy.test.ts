/**
 * Regression M2 (ADR-0234): `{ secret: "NAME" }` resolved ANY variable of the Harness's
 * environment — its own bearer JR2_HARNESS_TOKEN included — and sent it to whatever URL the
 * Agent named, plain http too. Root cause: httpTransport read `environment[NAME]` with no policy.
 * Now: JR2_*, git's credential variables and anything holding the Harness's own token are
 * refused; other names only when the operator lists them in JR2_MCP_SECRETS; a secret goes only
 * to https or loopback. Driven through a real Streamable HTTP client against a real listener.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openMcpSession } from "../../src/tools/mcp/mcp-session.js";
import { memorySnapshotStore } from "../../src/tools/mcp/snapshot-store.js";
import { createRedactor } from "../../src/tools/secret-redaction.js";

const BEARER = "harness-bearer-9f8e7d6c5b4a3210";
let srv: Server;
let seen: Array<string | undefined>;
let url: string;
beforeEach(async () => {
  seen = [];
  srv = createServer((req, res) => {
    seen.push(req.headers["x-harvest"] as string | undefined);
    res.statusCode = 500;
    res.end();
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/mcp`;
});
afterEach(() => new Promise<void>((r) => srv.close(() => r())));

const open = async (name: string, env: Record<string, string>, to = url) => {
  const s = await openMcpSession({
    iid: `r/${Math.random()}`,
    cwd: undefined,
    access: "none",
    store: memorySnapshotStore(),
    servers: { x: { url: to, headers: { "X-Harvest": { secret: name } } } },
    context: { environment: { JR2_HARNESS_TOKEN: BEARER, ...env }, secrets: createRedactor([]) },
    timeouts: { startMs: 2000, listMs: 2000 },
  });
  await s.close();
  return s.down[0]?.reason ?? "(up)";
};

describe("{ secret } headers (M2)", () => {
  it("JR2_HARNESS_TOKEN is refused even when the operator lists it; nothing reaches the server", async () => {
    const reason = await open("JR2_HARNESS_TOKEN", { JR2_MCP_SECRETS: "JR2_HARNESS_TOKEN" });
    expect(reason).toContain("`JR2_HARNESS_TOKEN`, one of the Harness's own");
    expect(seen).toEqual([]);
  });
  it("a variable that holds the Harness's bearer is refused under any name", async () => {
    const reason = await open("ALIAS", { ALIAS: `Bearer ${BEARER}`, JR2_MCP_SECRETS: "ALIAS" });
    expect(reason).toContain("holds the Harness's own token");
    expect(seen).toEqual([]);
  });
  it("the git token's variable (JR2_GIT_TOKEN_ENV) is refused", async () => {
    const env = { GH_PUSH: "ghp_x1", JR2_GIT_TOKEN_ENV: "GH_PUSH", JR2_MCP_SECRETS: "GH_PUSH" };
    expect(await open("GH_PUSH", env)).toContain("the git token's variable");
    expect(seen).toEqual([]);
  });
  it("a name the operator has not listed in JR2_MCP_SECRETS is refused, naming the fix", async () => {
    const reason = await open("AWS_SECRET_ACCESS_KEY", { AWS_SECRET_ACCESS_KEY: "aws-secret-1" });
    expect(reason).toContain("add it to JR2_MCP_SECRETS");
    expect(seen).toEqual([]);
  });
  it("a listed name goes to a loopback server", async () => {
    await open("DOCS_TOKEN", { DOCS_TOKEN: "docs-1", JR2_MCP_SECRETS: "OTHER, DOCS_TOKEN" });
    expect(seen).toContain("docs-1");
  });
  it("a listed name is never sent over plain http to a host other than loopback", async () => {
    const reason = await open(
      "DOCS_TOKEN",
      { DOCS_TOKEN: "docs-1", JR2_MCP_SECRETS: "DOCS_TOKEN" },
      "http://10.255.255.1:9/mcp",
    );
    expect(reason).toContain("neither https nor loopback");
  });
});
