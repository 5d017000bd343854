import {
  isStdioServer,
  Jr2Error,
  literalSecretProblem,
  MCP_SERVER_NAME_PATTERN,
  McpServer,
  type McpServers,
  secretRefProblem,
} from "@jr2/wire";

/**
 * An Agent's `mcp` block checked at load (issue 29, ADR-0230): each key a server name
 * (`[A-Za-z0-9-]`, ≤ 32: no `_`, so `mcp__<server>__<tool>` names never collide across servers),
 * each value a stdio (`{ command, args? }`) or Streamable HTTP (`{ url, headers? }`) server, and
 * no literal header value that looks like a secret (name it `{ secret: "NAME" }`), and no
 * `{ secret }` that names the Harness's own variables or travels over plain http. Collisions
 * with Working tools and Menu picks cannot happen by construction: Menu picks may not start
 * with `mcp__` (defineEvent refuses it), and no Working tool does. Collisions among one server's
 * own tools can only be seen once its tools are listed: the Harness decides those (ADR-0230).
 * @returns a frozen copy (the wire shape), or `undefined` for no servers
 * @throws Jr2Error `JR2_ERR_SETUP_AGENT_MCP_INVALID` (bad name or shape, naming the server),
 *   `JR2_ERR_SETUP_AGENT_MCP_LITERAL_SECRET` (naming the server, the header and why),
 *   `JR2_ERR_SETUP_AGENT_MCP_SECRET_REFUSED` (a `{ secret }` naming a `JR2_*`/git credential
 *   variable, or sent to a URL neither https nor loopback: ADR-0234)
 */
export function checkAgentMcp(raw: unknown): McpServers | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new Jr2Error("JR2_ERR_SETUP_AGENT_MCP_INVALID", {
      server: "(all)",
      detail: "`mcp` must be an object of servers by name: { fs: { command, args }, gh: { url, headers } }",
    });
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > 16)
    throw new Jr2Error("JR2_ERR_SETUP_AGENT_MCP_INVALID", {
      server: "(all)",
      detail: `${entries.length} servers; at most 16 per Agent`,
    });
  const out: Record<string, McpServer> = {};
  for (const [name, value] of entries) {
    if (!MCP_SERVER_NAME_PATTERN.test(name))
      throw new Jr2Error("JR2_ERR_SETUP_AGENT_MCP_INVALID", {
        server: name,
        detail: "a server name is 1-32 letters, digits and `-`, starting with a letter or digit (no `_`)",
      });
    const parsed = McpServer.safeParse(value);
    if (!parsed.success)
      throw new Jr2Error("JR2_ERR_SETUP_AGENT_MCP_INVALID", {
        server: name,
        detail: `expected { command, args?, required? } or { url, headers?, required? }: ${parsed.error.issues
          .map((i) => `${i.path.join(".") || "(server)"}: ${i.message}`)
          .join("; ")}`,
      });
    const server = parsed.data;
    if (!isStdioServer(server))
      for (const [header, v] of Object.entries(server.headers ?? {})) {
        if (typeof v !== "string") {
          const refused = secretRefProblem(header, v.secret, server.url);
          if (refused)
            throw new Jr2Error("JR2_ERR_SETUP_AGENT_MCP_SECRET_REFUSED", { server: name, reason: refused });
          continue;
        }
        const reason = literalSecretProblem(header, v);
        if (reason)
          throw new Jr2Error("JR2_ERR_SETUP_AGENT_MCP_LITERAL_SECRET", { server: name, header, reason });
      }
    out[name] = server;
  }
  return entries.length === 0 ? undefined : Object.freeze(out);
}
