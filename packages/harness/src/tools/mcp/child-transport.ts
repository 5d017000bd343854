import type { ChildProcess } from "node:child_process";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * The SDK's stdio framing over a process the Harness already started (in the run's sandbox,
 * through @jr2/sandbox's `spawnService`): the SDK's own `StdioClientTransport` spawns its
 * process itself, which would bypass bwrap. Framing is the SDK's (`ReadBuffer`,
 * `serializeMessage`); only who owns the process differs. Closing kills the process (`stop`).
 */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();
  private closed = false;

  constructor(
    private readonly child: ChildProcess,
    private readonly stop: () => Promise<unknown>,
  ) {}

  async start(): Promise<void> {
    const { stdout, stdin } = this.child;
    if (!stdout || !stdin) throw new Error("the MCP server process has no stdio pipes");
    stdout.on("data", (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (err) {
          this.onerror?.(err as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
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

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}
