import { spawn } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { isAbsolute } from "node:path";
import { spawnService } from "@jr2/sandbox";
import { isStdioServer, type McpServer } from "@jr2/wire";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { WorkingSandbox } from "../sandbox/working-sandbox.js";
import type { Redactor } from "../secret-redaction.js";
import { scrubEnvironment } from "../working-environment.js";
import type { ListedTool } from "./canonical.js";
import { ChildProcessTransport } from "./child-transport.js";
import { installAtStartProblem } from "./install-at-start.js";

/** A connected MCP server: list, call, close (the official SDK's `Client` underneath). */
export interface McpConnection {
  readonly server: string;
  listTools(timeoutMs: number): Promise<ListedTool[]>;
  callTool(tool: string, args: unknown, timeoutMs: number, signal?: AbortSignal): Promise<McpCallResult>;
  close(): Promise<void>;
}

/** What a `tools/call` answered: its text parts joined, and whether the server flagged an error. */
export interface McpCallResult {
  text: string;
  isError: boolean;
}

/** Where a stdio server runs and what an HTTP server's headers resolve from. */
export interface McpConnectContext {
  /** The Harness's sandbox: `on` → bwrap via spawnService; `off`/absent → a plain child. */
  sandbox?: WorkingSandbox;
  /** The sandbox's root (the Worktree, or an empty private directory for `none`). */
  root: string;
  access: "read" | "write";
  /** The Harness's environment: stdio servers get it scrubbed; `{ secret }` headers read it. */
  environment: Readonly<Record<string, string | undefined>>;
  secrets: Redactor;
  /** A `notifications/tools/list_changed` arrived (observed, never acted on mid-conversation). */
  onListChanged?: () => void;
  /** The server's stderr line or transport error, for the warn line. */
  onTrouble?: (message: string) => void;
}

/** A server that cannot be started as given: the reason, for the receipt and the warn line. */
export class McpStartRefused extends Error {}

/**
 * Connects to one server and initializes the MCP session. stdio: `command args` in the run's
 * sandbox (spawnService, no tool limits, no network; read-only binds of the absolute paths the
 * command names, so an installed server's files are reachable) or, with the sandbox off, as a
 * child of the Harness with the scrubbed environment. HTTP: Streamable HTTP with `{ secret }`
 * headers resolved from the Harness's environment (an unset name is a start failure naming it).
 * @throws McpStartRefused (install-at-start, unset secret); the SDK's errors on connect
 */
export async function connectMcp(
  server: string,
  spec: McpServer,
  ctx: McpConnectContext,
  timeoutMs: number,
): Promise<McpConnection> {
  const transport = isStdioServer(spec) ? await stdioTransport(spec, ctx) : httpTransport(spec, ctx);
  const client = new Client({ name: "jr2-harness", version: "0.1.0" }, { capabilities: {} });
  client.onerror = (err) => ctx.onTrouble?.(ctx.secrets.redact(err.message));
  await client.connect(transport, { timeout: timeoutMs });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => ctx.onListChanged?.());
  return {
    server,
    listTools: async (t) => {
      const tools: ListedTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: t });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    },
    callTool: async (tool, args, t, signal) => {
      const result = await client.callTool(
        { name: tool, arguments: (args ?? {}) as Record<string, unknown> },
        undefined,
        { timeout: t, ...(signal ? { signal } : {}) },
      );
      const parts = Array.isArray(result.content) ? result.content : [];
      const text = parts
        .map((p: { type: string; text?: string }) =>
          p.type === "text" ? (p.text ?? "") : `[${p.type} content]`,
        )
        .join("\n");
      return { text, isError: result.isError === true };
    },
    close: () => client.close(),
  };
}

async function stdioTransport(
  spec: { command: string; args?: string[] },
  ctx: McpConnectContext,
): Promise<Transport> {
  const args = spec.args ?? [];
  const refused = installAtStartProblem(spec.command, args);
  if (refused) throw new McpStartRefused(refused);
  const env = scrubEnvironment({ ...ctx.environment }, ctx.secrets);
  if (ctx.sandbox?.mode === "on") {
    const service = await spawnService(
      {
        argv: [spec.command, ...args],
        env,
        root: ctx.root,
        access: ctx.access,
        readOnly: installedPaths([spec.command, ...args]),
        user: ctx.sandbox.user,
        stdin: "pipe",
      },
      { egress: "none" },
    );
    service.process.stderr?.on("data", (b: Buffer) => ctx.onTrouble?.(ctx.secrets.redact(String(b).trim())));
    return new ChildProcessTransport(service.process, () => service.stop());
  }
  const child = spawn(spec.command, args, { env, cwd: ctx.root, stdio: ["pipe", "pipe", "pipe"] });
  child.stderr?.on("data", (b: Buffer) => ctx.onTrouble?.(ctx.secrets.redact(String(b).trim())));
  await new Promise<void>((ok, fail) => {
    child.once("spawn", ok);
    child.once("error", (e) => fail(new McpStartRefused(`\`${spec.command}\` did not start: ${e.message}`)));
  });
  return new ChildProcessTransport(child, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
}

/**
 * The host paths a stdio command names (absolute arguments that exist), bound read-only in the
 * sandbox: a path inside a `node_modules` binds that whole `node_modules` (pnpm's links resolve
 * inside it). Everything else the server needs must be in the image (/usr, /etc are bound).
 */
function installedPaths(argv: readonly string[]): string[] {
  const out = new Set<string>();
  for (const a of argv) {
    if (!isAbsolute(a) || !existsSync(a)) continue;
    for (const p of [a, realpathSync(a)]) {
      const i = p.indexOf("/node_modules/");
      out.add(i >= 0 ? p.slice(0, i + "/node_modules".length) : p);
    }
  }
  return [...out];
}

function httpTransport(
  spec: { url: string; headers?: Record<string, unknown> },
  ctx: McpConnectContext,
): Transport {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(spec.headers ?? {})) {
    if (typeof value === "string") headers[name] = value;
    else {
      const ref = (value as { secret: string }).secret;
      const resolved = ctx.environment[ref];
      if (resolved === undefined || resolved === "")
        throw new McpStartRefused(
          `header \`${name}\` names secret \`${ref}\`, which the Harness's environment does not set`,
        );
      headers[name] = resolved;
    }
  }
  return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers } });
}
