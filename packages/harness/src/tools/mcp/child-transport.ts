import type { ChildProcess } from "node:child_process";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { LineFramer } from "./bounds/line-framer.js";
import { McpServerDown, oversizeReason } from "./bounds/message-bound.js";

/**
 * The SDK's stdio framing over a process the Harness already started (in the run's sandbox,
 * through @jr2/sandbox's `spawnService`): the SDK's own `StdioClientTransport` spawns its
 * process itself, which would bypass bwrap. Framing is the SDK's (`ReadBuffer`,
 * `serializeMessage`); only who owns the process differs. Closing kills the process (`stop`).
 * Reading is bounded per message (line-framer.ts, ADR-0232): an oversized message closes the
 * connection, `downReason` says why, and nothing is thrown in the stream's handler.
 */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Why this connection was closed by the Harness (an oversized message), else `undefined`. */
  downReason: string | undefined;
  private closed = false;
  private readonly framer = new LineFramer(
    (line) => this.deliver(line),
    (bytes) => this.oversize(bytes),
  );

  constructor(
    private readonly child: ChildProcess,
    private readonly stop: () => Promise<unknown>,
  ) {}

  async start(): Promise<void> {
    const { stdout, stdin } = this.child;
    if (!stdout || !stdin) throw new Error("the MCP server process has no stdio pipes");
    stdout.on("data", (chunk: Buffer) => {
      if (!this.closed) this.framer.push(chunk);
    });
    stdin.on("error", (err) => this.onerror?.(err));
    this.child.once("close", () => this.finish());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child.stdin;
    if (!stdin || this.closed) throw new Error("the MCP server process is gone");
    await new Promise<void>((ok) =>
      stdin.write(serializeMessage(message)) ? ok() : stdin.once("drain", ok),
    );
  }

  async close(): Promise<void> {
    await this.stop();
    this.finish();
  }

  private deliver(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (err) {
      this.onerror?.(err as Error);
      return;
    }
    this.onmessage?.(message);
  }

  private oversize(bytes: number): void {
    if (this.downReason) return;
    this.downReason = oversizeReason(bytes);
    this.onerror?.(new McpServerDown(this.downReason));
    // The pending request is answered "Connection closed" by the SDK's Client; the session
    // reads `downReason` and marks the server down (no reconnect: it would answer the same).
    this.close().catch(() => this.finish());
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.framer.clear();
    this.onclose?.();
  }
}
