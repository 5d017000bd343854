import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { MCP_MESSAGE_MAX_BYTES, McpServerDown, oversizeReason } from "./message-bound.js";

/**
 * `fetch` for the Streamable HTTP transport with the stdio path's per-message bound (ADR-0232):
 * a JSON answer is counted whole, an SSE stream per event (bytes since the last blank line).
 * Past `limit` the body errors with {@link McpServerDown} and `onOversize` is told once: the
 * SDK's `response.json()` / event parser never hold more than `limit` bytes of one message.
 */
export function boundedFetch(
  onOversize: (reason: string) => void,
  limit: number = MCP_MESSAGE_MAX_BYTES,
  inner: FetchLike = globalThis.fetch.bind(globalThis),
): FetchLike {
  return async (url, init) => {
    const response = await inner(url, init);
    if (!response.body) return response;
    const sse = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    let bytes = 0;
    let prev = 0;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        let over = false;
        if (sse)
          for (const b of chunk) {
            // An event ends at a blank line (`\n\n` or `\r\n\r\n`): count each event on its own.
            if (b === 0x0d) continue;
            bytes = b === 0x0a && prev === 0x0a ? 0 : bytes + 1;
            prev = b;
            if (bytes > limit) over = true;
          }
        else {
          bytes += chunk.length;
          over = bytes > limit;
        }
        if (over) {
          const reason = oversizeReason(bytes, limit);
          onOversize(reason);
          controller.error(new McpServerDown(reason));
          return;
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(counter), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
