import { MCP_MESSAGE_MAX_BYTES } from "./message-bound.js";

/**
 * Newline-delimited framing of a stdio MCP stream with a per-message byte bound (ADR-0232).
 * The SDK's `ReadBuffer` throws from `append` once its whole buffer passes 10 MiB — thrown in a
 * stream's `data` handler that killed the Harness — and re-concatenates the buffer on every
 * chunk. This framer keeps a message's chunks in a list, counts its bytes as they arrive and
 * stops holding them the moment a message passes `limit`: the caller is told once
 * (`onOversize`), never thrown at, and the rest of that line is dropped unread.
 */
export class LineFramer {
  private parts: Buffer[] = [];
  private bytes = 0;
  private dropping = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOversize: (bytes: number) => void,
    private readonly limit: number = MCP_MESSAGE_MAX_BYTES,
  ) {}

  /** Feeds one chunk; calls `onLine` for every complete line (without `\n`/`\r\n`). */
  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      this.take(chunk.subarray(start, end));
      if (nl === -1) return;
      this.endLine();
      start = nl + 1;
    }
  }

  /** Forgets a partial line (the stream closed). */
  clear(): void {
    this.parts = [];
    this.bytes = 0;
    this.dropping = false;
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    this.bytes += piece.length;
    if (this.dropping) return;
    if (this.bytes > this.limit) {
      this.dropping = true;
      this.parts = [];
      this.onOversize(this.bytes);
      return;
    }
    this.parts.push(piece);
  }

  private endLine(): void {
    const parts = this.parts;
    const dropped = this.dropping;
    this.clear();
    if (dropped || parts.length === 0) return;
    const line = Buffer.concat(parts).toString("utf8").replace(/\r$/, "");
    if (line.trim() !== "") this.onLine(line);
  }
}
