// bench/mcp's own MCP servers (issue 29): Streamable HTTP on 127.0.0.1 with the official SDK's
// server, answering `tools/list` in a new order every time and dropping every session and socket
// on `drop()` (the bench calls it every 30 s). The test suite's twin is
// packages/harness/test/fixtures/mcp-http-server.ts (TypeScript, with auth and tool removal).
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ROOT } from "./lib.mjs";

// The SDK is a dependency of @jr2/harness: resolved from there.
const require = createRequire(join(ROOT, "packages/harness/package.json"));
const sdk = (p) => import(require.resolve(`@modelcontextprotocol/sdk/${p}`));

/** Starts a reordering server named `name` offering `tools` (name, description, schema). */
export async function startReorderingServer(name, tools) {
  const { Server } = await sdk("server/index.js");
  const { StreamableHTTPServerTransport } = await sdk("server/streamableHttp.js");
  const { CallToolRequestSchema, ListToolsRequestSchema } = await sdk("types.js");
  const sessions = new Map();
  let lists = 0;
  let drops = 0;
  const newSession = () => {
    const server = new Server({ name, version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      lists++;
      const shuffled = [...tools].sort(() => (Math.random() < 0.5 ? -1 : 1));
      return { tools: shuffled.map((t) => ({ ...t, _meta: { listedAt: Date.now() } })) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (req) => ({
      content: [
        { type: "text", text: `${name}/${req.params.name}: ${JSON.stringify(req.params.arguments ?? {})}` },
      ],
    }));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    return { server, transport };
  };
  const http = createServer(async (req, res) => {
    let body;
    if (req.method === "POST") {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const text = Buffer.concat(chunks).toString("utf8");
      body = text ? JSON.parse(text) : undefined;
    }
    const id = req.headers["mcp-session-id"];
    const known = typeof id === "string" ? sessions.get(id) : undefined;
    if (known) return known.handleRequest(req, res, body);
    if (typeof id === "string") {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(
        JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }),
      );
    }
    const { server, transport } = newSession();
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise((ok) => http.listen(0, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${http.address().port}/mcp`,
    stats: () => ({ lists, drops }),
    drop() {
      drops++;
      for (const t of sessions.values()) t.close().catch(() => {});
      sessions.clear();
      http.closeAllConnections();
    },
    close: async () => {
      for (const t of sessions.values()) await t.close().catch(() => {});
      http.closeAllConnections();
      await new Promise((ok) => http.close(ok));
    },
  };
}

const str = (description) => ({ type: "string", description });
/** The two servers' tools: a few, with schemas whose keys a server may send in any order. */
export const DOCS_TOOLS = [
  {
    name: "lookup",
    description: "Look a term up in the docs.",
    inputSchema: { type: "object", properties: { term: str("the term") }, required: ["term"] },
  },
  {
    name: "search",
    description: "Full-text search of the docs.",
    inputSchema: {
      properties: { query: str("words"), limit: { type: "integer" } },
      type: "object",
      required: ["query"],
    },
  },
  {
    name: "page.get",
    description: "One docs page by path.",
    inputSchema: { type: "object", properties: { path: str("page path") }, required: ["path"] },
  },
];
export const TRACKER_TOOLS = [
  {
    name: "issue_get",
    description: "One issue by number.",
    inputSchema: { type: "object", properties: { number: { type: "integer" } }, required: ["number"] },
  },
  {
    name: "issue_list",
    description: "Open issues, newest first.",
    inputSchema: { type: "object", properties: { label: str("a label") } },
  },
  {
    name: "comment",
    description: "Comment on an issue.",
    inputSchema: {
      type: "object",
      properties: { number: { type: "integer" }, body: str("text") },
      required: ["number", "body"],
    },
  },
];
