/**
 * The connection bound, without a lock-out (issue 24 item 4, ADR-0285). Node's own
 * `server.maxConnections` refuses the NEWEST connection once the bound is reached: 1,024 silent
 * TCP connections (no token needed) refused every other client — the Harness's picks, the CLI,
 * the console — for the 5–10 s until the headers timeout cut them, renewable at will.
 * Here a connection is *unproven* until its first request arrived (its headers parsed):
 * - one that sent nothing is closed after {@link SILENT_MS};
 * - unproven connections may fill the bound only up to a reserve (1/8 of it), and those of one
 *   address only up to half of it;
 * - past either, or past the bound, the OLDEST unproven connection is closed to admit the new
 *   one; the new one is refused only when every open connection has proven itself.
 * A client that sends its request at once (every real client: `/healthz`, a pick, the CLI) is
 * thus served while idle sockets come and go, and the connections that already carried a
 * request (pooled keep-alive sockets) are never cut for a newcomer.
 * @see ADR-0285
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { FastifyBaseLogger } from "fastify";

/** A connection that sent no byte is closed after this long, ms. */
export const SILENT_MS = 2_000;

/** What {@link guardConnections} counted, for tests and logs. */
export interface ConnectionGuardStats {
  /** Unproven connections closed to make room, or for their silence. */
  evicted: number;
  /** New connections refused: every open one had proven itself. */
  refused: number;
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
  const open = new Set<Socket>();
  /** Unproven connections, oldest first (a Map keeps insertion order). */
  const unproven = new Map<Socket, string>();
  const reserve = Math.max(1, Math.floor(maxConnections / 8));
  const perAddress = Math.max(1, Math.ceil(maxConnections / 2));
  let lastWarn = Number.NEGATIVE_INFINITY;
  const warn = () => {
    const now = Date.now();
    if (now - lastWarn < 60_000) return;
    lastWarn = now;
    log.warn(
      { ...stats, maxConnections, setting },
      "connections at the bound: closing connections that sent no request (oldest first)",
    );
  };
  const evict = (victim: Socket | undefined): boolean => {
    if (!victim) return false;
    unproven.delete(victim);
    victim.destroy();
    stats.evicted += 1;
    warn();
    return true;
  };
  const oldest = (address?: string): Socket | undefined => {
    for (const [socket, from] of unproven) if (address === undefined || from === address) return socket;
    return undefined;
  };
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "";
    if (open.size >= maxConnections && !evict(oldest())) {
      socket.destroy();
      stats.refused += 1;
      warn();
      return;
    }
    let fromHere = 0;
    for (const from of unproven.values()) if (from === address) fromHere += 1;
    if (fromHere >= perAddress) evict(oldest(address));
    else if (unproven.size >= maxConnections - reserve) evict(oldest());
    open.add(socket);
    unproven.set(socket, address);
    const silent = setTimeout(() => {
      if (unproven.has(socket) && socket.bytesRead === 0) evict(socket);
    }, SILENT_MS);
    silent.unref();
    socket.once("close", () => {
      clearTimeout(silent);
      open.delete(socket);
      unproven.delete(socket);
    });
  });
  server.on("request", (request: { socket: Socket }) => {
    unproven.delete(request.socket);
  });
  return stats;
}
