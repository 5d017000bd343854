/**
 * The run's egress proxy (issue 26 item 4, ADR-0171): an HTTP proxy on a Unix socket that the
 * sandbox reaches through its in-sandbox forwarder (helper/forwarder.mjs, 127.0.0.1:3128).
 * Only host *names* on the allow list pass — `CONNECT host:port` (HTTPS, end-to-end TLS) and
 * plain `GET http://host/…` — each resolved by the proxy, never by the sandbox; everything else
 * gets 403 with JR2_ERR_SANDBOX_EGRESS_REFUSED's message.
 */

import { lookup } from "node:dns/promises";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, isIP, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jr2Error } from "@jr2/wire";

/** Resolves an allowed host name to the address the proxy connects to. */
export type EgressResolver = (host: string) => Promise<string>;

export interface EgressProxyOptions {
  /** Host names that pass: exact (`registry.npmjs.org`) or `*.example.com` for its subdomains. */
  allow: readonly string[];
  /**
   * Default: the system resolver (`dns.lookup`), whose answers in loopback, unspecified or
   * link-local space are refused ({@link resolvePublic}). An injected resolver is the embedder's
   * own and trusted as it answers (a test serves a loopback server under an allowed name).
   */
  resolve?: EgressResolver;
}

/** A running egress proxy: bind {@link socketPath} into a sandbox (runTool's `network`). */
export interface EgressProxy {
  readonly socketPath: string;
  readonly allow: readonly string[];
  /** Whether `host` is on the allow list. */
  allows(host: string): boolean;
  close(): Promise<void>;
}

/** True when `host` matches an allow-list entry (case-insensitive; `*.x` = strict subdomains of x). */
export function hostAllowed(allow: readonly string[], host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return allow.some((entry) => {
    const e = entry.toLowerCase();
    return e.startsWith("*.") ? h.endsWith(e.slice(1)) : h === e;
  });
}

/**
 * Why `address` is no destination for a sandbox's egress, or undefined: loopback (127/8, ::1),
 * unspecified (0.0.0.0, ::) and link-local (169.254/16 — cloud metadata — and fe80::/10), IPv4
 * ones also in their IPv4-mapped IPv6 form. Private LAN ranges pass: a home lab allows its own
 * git server by name.
 */
export function reservedAddress(address: string): string | undefined {
  const a = address.toLowerCase().replace(/^::ffff:(?=\d+\.)/, "");
  if (isIP(a) === 4) {
    if (a.startsWith("127.")) return "loopback";
    if (a === "0.0.0.0") return "unspecified";
    if (a.startsWith("169.254.")) return "link-local";
    return undefined;
  }
  if (a === "::1") return "loopback";
  if (a === "::") return "unspecified";
  if (/^fe[89ab]/.test(a)) return "link-local";
  return undefined;
}

/**
 * The system resolver, refusing an answer in {@link reservedAddress}'s space: an allowed name
 * whose DNS answers 127.0.0.1 (rebinding, `*.nip.io`-style names, /etc/hosts) must not reach the
 * Harness's, the Orchestrator's or a model server's loopback port.
 */
async function resolvePublic(host: string): Promise<string> {
  const { address } = await lookup(host);
  const why = reservedAddress(address);
  if (why) throw new Error(`${host} resolves to ${address} (${why}), which a sandbox never reaches`);
  return address;
}

function refusal(allow: readonly string[], host: string): string {
  return jr2Error("JR2_ERR_SANDBOX_EGRESS_REFUSED", { host, allowed: allow.join(", ") || "none" }).error;
}

/** `host:port` of a CONNECT target (IPv6 in brackets accepted). */
function splitTarget(target: string): { host: string; port: number } | undefined {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(target);
  return m ? { host: m[1]!, port: Number(m[2]) } : undefined;
}

/**
 * Starts a proxy on a fresh Unix socket (mode 0666: the sandbox's uid connects to it).
 * @throws if the socket cannot be created.
 */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const allow = [...options.allow];
  const resolve = options.resolve ?? resolvePublic;
  const allows = (host: string) => isIP(host) === 0 && hostAllowed(allow, host);
  const dir = await mkdtemp(join(tmpdir(), "jr2-egress-"));
  await chmod(dir, 0o755);
  const socketPath = join(dir, "egress.sock");

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end("jr2 egress proxy: send an absolute http:// URL\n");
      return;
    }
    if (url.protocol !== "http:" || !allows(url.hostname)) {
      res.writeHead(403, { "content-type": "text/plain" }).end(`${refusal(allow, url.hostname)}\n`);
      return;
    }
    resolve(url.hostname).then(
      (address) => {
        const upstream = httpRequest(
          {
            host: address,
            port: Number(url.port || 80),
            path: `${url.pathname}${url.search}`,
            method: req.method,
            headers: { ...req.headers, host: url.host },
          },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          },
        );
        upstream.on("error", (err) => res.writeHead(502).end(`jr2 egress proxy: ${err.message}\n`));
        req.pipe(upstream);
      },
      (err: Error) =>
        res.writeHead(502).end(`jr2 egress proxy: cannot resolve ${url.hostname}: ${err.message}\n`),
    );
  });

  // Tunnels leave the HTTP server's bookkeeping: kept here so close() ends them.
  const tunnels = new Set<Socket>();
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    tunnels.add(client);
    client.on("close", () => tunnels.delete(client));
    const target = splitTarget(req.url ?? "");
    client.on("error", () => client.destroy());
    if (!target || !allows(target.host)) {
      const body = `${refusal(allow, target?.host ?? String(req.url))}\n`;
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    resolve(target.host).then(
      (address) => {
        const upstream = connect(target.port, address, () => {
          client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
          if (head.length > 0) upstream.write(head);
          upstream.pipe(client).pipe(upstream);
        });
        upstream.on("error", (err) => {
          if (client.writable)
            client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\njr2 egress proxy: ${err.message}\n`);
        });
        client.on("close", () => upstream.destroy());
      },
      (err: Error) => client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\njr2 egress proxy: ${err.message}\n`),
    );
  });

  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(socketPath, () => ok());
  });
  await chmod(socketPath, 0o666);
  return {
    socketPath,
    allow,
    allows,
    close: async () => {
      server.closeAllConnections();
      for (const t of tunnels) t.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
