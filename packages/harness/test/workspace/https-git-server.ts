import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** A git remote over HTTPS on 127.0.0.1: `git http-backend` behind a bearer-token check. */
export interface HttpsGitServer {
  /** `https://127.0.0.1:<port>/` — append `<name>.git`. */
  url: string;
  /** The self-signed certificate (PEM) to trust (`JR2_GIT_CA_FILE`). */
  caFile: string;
  /** Requests refused for a missing or wrong token. */
  refused: number;
  /** Every request it received. */
  requests: number;
  close(): Promise<void>;
}

/**
 * Serves the bare repositories under `root` with `git http-backend` (CGI, smart HTTP, push
 * enabled), answering 401 unless the request carries `Authorization: Basic` of `<any>:<token>`.
 * Makes a self-signed certificate for 127.0.0.1 in `dir` with openssl. Loopback only. With
 * `redirectTo` (another server's URL) it answers every request 302 there instead, as a forge
 * that moved a repository does.
 */
export async function startHttpsGitServer(
  root: string,
  token: string,
  dir: string,
  opts: { redirectTo?: string } = {},
): Promise<HttpsGitServer> {
  const key = join(dir, "server.key");
  const cert = join(dir, "server.crt");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-keyout",
      key,
      "-out",
      cert,
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  const state = { refused: 0, requests: 0 };
  const server: Server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    state.requests += 1;
    if (opts.redirectTo) {
      res.writeHead(302, { Location: new URL((req.url ?? "/").slice(1), opts.redirectTo).href }).end();
      return;
    }
    const auth = req.headers.authorization ?? "";
    const basic = /^Basic (.+)$/.exec(auth)?.[1];
    const given = basic ? Buffer.from(basic, "base64").toString().split(":").slice(1).join(":") : undefined;
    if (given !== token) {
      state.refused += 1;
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"' }).end();
      return;
    }
    const url = new URL(req.url ?? "/", "https://127.0.0.1");
    const cgi = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        REMOTE_USER: "jr2",
        REQUEST_METHOD: req.method ?? "GET",
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        ...(req.headers["content-encoding"]
          ? { HTTP_CONTENT_ENCODING: req.headers["content-encoding"] }
          : {}),
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString().split("\r\n")) {
        const i = line.indexOf(":");
        const [name, value] = [line.slice(0, i).trim(), line.slice(i + 1).trim()];
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    cgi.on("close", () => res.end());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/`,
    caFile: cert,
    get refused() {
      return state.refused;
    },
    get requests() {
      return state.requests;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
