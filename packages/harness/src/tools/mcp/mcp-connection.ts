import { spawn } from "node:child_process";
import { spawnService } from "@jr2/sandbox";
import { isStdioServer, type McpServer } from "@jr2/wire";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { WorkingSandbox } from "../sandbox/working-sandbox.js";
import type { Redactor } from "../secret-redaction.js";
import { scrubEnvironment } from "../working-environment.js";
import { boundedFetch } from "./bounds/bounded-fetch.js";
import { listAllPages } from "./bounds/listing-bounds.js";
import { MCP_MESSAGE_MAX_BYTES, McpServerDown } from "./bounds/message-bound.js";
import type { ListedTool } from "./canonical.js";
import { ChildProcessTransport } from "./child-transport.js";
import { installAtStartProblem } from "./install-at-start.js";
import { secretHeaderProblem } from "./secret-policy.js";
import { bindGuard, stdioBinds } from "./stdio-binds.js";

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
  /** The run's own Worktree (`read`/`write`), which an argument may name; absent for `none`. */
  worktree?: string;
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
 * A message over {@link MCP_MESSAGE_MAX_BYTES} (either transport) closes the connection: every
 * pending and later call throws {@link McpServerDown} with the reason (ADR-0232).
 * @throws McpStartRefused (install-at-start, unset or refused secret, plain-http URL carrying a
 *   secret); the SDK's errors on connect; McpServerDown after an oversized message
 */
export async function connectMcp(
  server: string,
  spec: McpServer,
  ctx: McpConnectContext,
  timeoutMs: number,
): Promise<McpConnection> {
  let downReason: string | undefined;
  let client: Client | undefined;
  const markDown = (reason: string) => {
    if (downReason) return;
    downReason = reason;
    void client?.close().catch(() => undefined);
  };
  const transport = isStdioServer(spec)
    ? await stdioTransport(spec, ctx)
    : httpTransport(spec, ctx, markDown);
  client = new Client({ name: "jr2-harness", version: "0.1.0" }, { capabilities: {} });
  const c = client;
  c.onerror = (err) => {
    if (transport instanceof ChildProcessTransport && transport.downReason) markDown(transport.downReason);
    ctx.onTrouble?.(ctx.secrets.redact(err.message));
  };
  /** Runs `work`; once the connection was closed for an oversized message, says so instead. */
  const guarded = async <T>(work: () => Promise<T>): Promise<T> => {
    if (downReason) throw new McpServerDown(downReason);
    try {
      return await work();
    } catch (err) {
      const reason =
        downReason ?? (transport instanceof ChildProcessTransport ? transport.downReason : undefined);
      if (reason) throw new McpServerDown(reason);
      throw err;
    }
  };
  await guarded(() => c.connect(transport, { timeout: timeoutMs }));
  c.setNotificationHandler(ToolListChangedNotificationSchema, () => ctx.onListChanged?.());
  return {
    server,
    listTools: (t) => guarded(() => listAllPages(c, t)),
    callTool: (tool, args, t, signal) =>
      guarded(async () => {
        const result = await c.callTool(
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
      }),
    close: () => c.close(),
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
    const binds = stdioBinds([spec.command, ...args], bindGuard(ctx.environment, ctx.worktree));
    if ("refused" in binds) throw new McpStartRefused(binds.refused);
    const service = await spawnService(
      {
        argv: [spec.command, ...args],
        env,
        root: ctx.root,
        access: ctx.access,
        readOnly: binds.binds,
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

function httpTransport(
  spec: { url: string; headers?: Record<string, unknown> },
  ctx: McpConnectContext,
  onOversize: (reason: string) => void,
): Transport {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(spec.headers ?? {})) {
    if (typeof value === "string") headers[name] = value;
    else {
      const ref = (value as { secret: string }).secret;
      const refused = secretHeaderProblem(name, ref, spec.url, ctx.environment);
      if (refused) throw new McpStartRefused(refused);
      const resolved = ctx.environment[ref];
      if (resolved === undefined || resolved === "")
        throw new McpStartRefused(
          `header \`${name}\` names secret \`${ref}\`, which the Harness's environment does not set`,
        );
      headers[name] = resolved;
    }
  }
  return new StreamableHTTPClientTransport(new URL(spec.url), {
    requestInit: { headers },
    fetch: boundedFetch(onOversize),
  });
}
