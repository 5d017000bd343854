/**
 * The connection bound, without a lock-out (issue 24 item 4, ADR-0285, ADR-0287). Node's own
 * `server.maxConnections` refuses the NEWEST connection once the bound is reached: 1,024 silent
 * TCP connections (no token needed) refused every other client — the Harness's picks, the CLI,
 * the console — for the 5–10 s until the headers timeout cut them, renewable at will.
 * Here a connection is *unproven* until one of its requests passed authentication
 * ({@link proveConnection}, called by the services' bearer checks) or was answered below 400
 * (`/healthz`). A connection whose request was answered 4xx is closed after the answer
 * (`Connection: close`): a 401 buys no keep-alive socket.
 * - one that sent nothing is closed after {@link SILENT_MS};
 * - an unproven one whose request (its body) has not finished after {@link UNPROVEN_REQUEST_MS}
 *   is closed: a trickled body holds no slot for the 30 s request timeout;
 * - unproven connections may fill the bound only up to a reserve (1/8 of it); the connections
 *   of one address that carry no request in flight (unproven or idle keep-alive) only up to half
 *   of it — past that its oldest is closed;
 * - at the bound the OLDEST unproven connection is closed to admit the new one, else the
 *   longest-idle proven keep-alive connection; the new one is refused only when every open
 *   connection is proven and serving a request.
 * A client that sends its request at once (every real client) is thus served while idle sockets
 * come and go; a request in flight on a proven connection is never cut for a newcomer.
 * @see ADR-0285, docs/adr/0287-connection-proof-by-authentication.md
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyBaseLogger } from "fastify";

/** A connection that sent no byte is closed after this long, ms. */
export const SILENT_MS = 2_000;
/** An unproven connection's request (headers and body) must finish within this long, ms. */
export const UNPROVEN_REQUEST_MS = 5_000;

/** What {@link guardConnections} counted, for tests and logs. */
export interface ConnectionGuardStats {
  /** Unproven or idle connections closed to make room, or for their silence or slowness. */
  evicted: number;
  /** New connections refused: every open one was proven and serving a request. */
  refused: number;
}

/** Per guarded socket: how the guard learns a request on it passed authentication. */
const provers = new WeakMap<Socket, () => void>();

/**
 * Marks `socket` proven: a request on it passed authentication (call from the bearer check,
 * before the body is read). A socket no guard watches is left alone.
 */
export function proveConnection(socket: Socket): void {
  provers.get(socket)?.();
}

interface Conn {
  address: string;
  proven: boolean;
  inFlight: number;
}

/**
 * Bounds `server`'s connections to `maxConnections` as described above; logs one `warn` a
 * minute while it evicts or refuses, naming `setting` (the service's env variable).
 */
export function guardConnections(
  server: Server,
  maxConnections: number,
  log: FastifyBaseLogger,
  setting: string,
): ConnectionGuardStats {
  const stats: ConnectionGuardStats = { evicted: 0, refused: 0 };
  const open = new Map<Socket, Conn>();
  /** Unproven connections, oldest first (a Map keeps insertion order). */
  const unproven = new Map<Socket, Conn>();
  /** Proven connections with no request in flight, longest idle first. */
  const idle = new Map<Socket, Conn>();
  const reserve = Math.max(1, Math.floor(maxConnections / 8));
  const perAddress = Math.max(1, Math.ceil(maxConnections / 2));
  let lastWarn = Number.NEGATIVE_INFINITY;
  const warn = () => {
    const now = Date.now();
    if (now - lastWarn < 60_000) return;
    lastWarn = now;
    log.warn(
      { ...stats, maxConnections, setting },
      "connections at the bound: closing unproven and idle connections (oldest first)",
    );
  };
  const evict = (victim: Socket | undefined): boolean => {
    if (!victim) return false;
    unproven.delete(victim);
    idle.delete(victim);
    victim.destroy();
    stats.evicted += 1;
    warn();
    return true;
  };
  const first = (from: Map<Socket, Conn>, address?: string): Socket | undefined => {
    for (const [socket, c] of from) if (address === undefined || c.address === address) return socket;
    return undefined;
  };
  const prove = (socket: Socket, conn: Conn) => {
    if (conn.proven || !open.has(socket)) return;
    conn.proven = true;
    unproven.delete(socket);
  };
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "";
    if (open.size >= maxConnections && !evict(first(unproven) ?? first(idle))) {
      socket.destroy();
      stats.refused += 1;
      warn();
      return;
    }
    let fromHere = 0;
    for (const c of unproven.values()) if (c.address === address) fromHere += 1;
    for (const c of idle.values()) if (c.address === address) fromHere += 1;
    if (fromHere >= perAddress) evict(first(unproven, address) ?? first(idle, address));
    else if (unproven.size >= maxConnections - reserve) evict(first(unproven));
    const conn: Conn = { address, proven: false, inFlight: 0 };
    open.set(socket, conn);
    unproven.set(socket, conn);
    provers.set(socket, () => prove(socket, conn));
    const silent = setTimeout(() => {
      if (unproven.has(socket) && socket.bytesRead === 0) evict(socket);
    }, SILENT_MS);
    silent.unref();
    socket.once("close", () => {
      clearTimeout(silent);
      open.delete(socket);
      unproven.delete(socket);
      idle.delete(socket);
    });
  });
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const conn = open.get(socket);
    if (!conn) return;
    conn.inFlight += 1;
    idle.delete(socket);
    closeAfterClientError(response, conn, () => prove(socket, conn));
    // A trickled body (or headers-complete, body-never) on an unproven socket is cut early.
    const slow = conn.proven
      ? undefined
      : setTimeout(() => {
          if (!conn.proven && !request.complete && open.has(socket)) evict(socket);
        }, UNPROVEN_REQUEST_MS);
    slow?.unref();
    response.once("close", () => {
      if (slow) clearTimeout(slow);
      conn.inFlight -= 1;
      if (conn.inFlight === 0 && conn.proven && open.has(socket) && !socket.destroyed) idle.set(socket, conn);
    });
  });
  return stats;
}

/**
 * Hooks `response`'s status line: a 4xx answer on an unproven connection closes it after the
 * answer (`Connection: close`: a 401 buys no keep-alive socket); one below 400 proves it.
 */
function closeAfterClientError(response: ServerResponse, conn: Conn, onAnswered: () => void): void {
  const writeHead = response.writeHead;
  response.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    if (status < 400) onAnswered();
    else if (status < 500 && !conn.proven) response.shouldKeepAlive = false;
    return (writeHead as (...a: unknown[]) => ServerResponse).call(this, status, ...rest);
  } as typeof response.writeHead;
}
