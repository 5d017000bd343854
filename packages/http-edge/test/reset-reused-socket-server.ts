/**
 * A real HTTP server on 127.0.0.1 (port 0) that plays the server's side of the keep-alive race:
 * the first request on each socket is answered (keep-alive), and chosen later requests on a
 * reused socket are met with a TCP reset before any answer byte — what a client sees when it
 * sends on a pooled socket the server is closing. Every socket has an 'error' handler.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ResetServerOptions {
  /** Answers a request that is not reset. */
  answer(req: IncomingMessage, res: ServerResponse, body: string): void;
  /** Whether this request, arriving on a reused socket, is reset. Default: every one. */
  resetReused?(req: IncomingMessage, body: string): boolean;
}

/** Starts the server; `close()` when done. `requests`: every request's `METHOD path` and whether it was reset. */
export async function startResetServer(options: ResetServerOptions) {
  const seen = new WeakMap<Socket, number>();
  const requests: Array<{ call: string; reset: boolean }> = [];
  const server = createServer((req, res) => {
    const socket = req.socket;
    const n = (seen.get(socket) ?? 0) + 1;
    seen.set(socket, n);
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const call = `${req.method} ${req.url}`;
      const reset = n > 1 && (options.resetReused?.(req, body) ?? true);
      requests.push({ call, reset });
      if (reset) socket.resetAndDestroy();
      else options.answer(req, res, body);
    });
  });
  server.on("connection", (socket) => socket.on("error", () => undefined));
  server.on("clientError", (_error, socket) => socket.destroy());
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Lets undici put the socket of an answer read in full back into its pool: it does so on a
 * later turn of the event loop (not after a time), so the next request reuses it.
 */
export const pooled = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
