/**
 * The web console's serving (issue 12, ADR-0451): `GET /` redirects to `/ui/`; `/ui/*` serves
 * the built single-page app of `@jr2/console` (its files, else `index.html`, so a deep link
 * survives a reload) with the console's Content-Security-Policy on every response. The files
 * hold no data and are open; every data call they make is an API route behind the bearer.
 * Also the one rule for every route: a `token` query parameter is refused (a token in a URL is
 * logged, cached and kept in history).
 * @see docs/adr/0451-console-serving-and-auth.md
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import fastifyStatic from "@fastify/static";
import { Jr2Error } from "@jr2/wire";
import type { FastifyInstance, FastifyReply } from "fastify";
import fp from "fastify-plugin";

/** The console's CSP, exactly as issue 12 settles it: no `'unsafe-eval'`, no `'unsafe-inline'`. */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/** Headers on every console response (the CSP and the usual hardening). */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=()",
};

/**
 * Query parameters read as a token (any case): `token`, and the names other tools put a bearer
 * under (`access_token` is RFC 6750's). Issue 24 item 8: `?access_token=` was logged in clear.
 */
const TOKEN_PARAMETERS: ReadonlySet<string> = new Set([
  "token",
  "access_token",
  "bearer",
  "api_key",
  "apikey",
  "auth_token",
]);

/** The fix the token-in-URL refusal names. */
const TOKEN_IN_URL_DETAIL =
  "a token query parameter (`token`, `access_token`, …) is refused: a token in a URL ends up in logs and browser history; " +
  "send it as the header `Authorization: Bearer <token>`";

function tokenNames(url: string): string[] {
  const q = url.indexOf("?");
  if (q < 0) return [];
  return [...new URLSearchParams(url.slice(q + 1)).keys()].filter((k) =>
    TOKEN_PARAMETERS.has(k.toLowerCase()),
  );
}

/** True when the request's query string names a token parameter (see above; any value, even empty). */
export function hasTokenParameter(url: string): boolean {
  return tokenNames(url).length > 0;
}

/**
 * Fastify's `rewriteUrl`: the value of each token query parameter becomes `[redacted]` before
 * anything reads or logs the URL (Fastify's "incoming request" line logs it). The parameter
 * stays, so {@link refuseTokenInUrl} still answers 400. Any other URL is returned as it came.
 */
export function redactTokenInUrl(req: { url?: string | undefined }): string {
  const url = req.url ?? "/";
  const names = tokenNames(url);
  if (names.length === 0) return url;
  const q = url.indexOf("?");
  const params = new URLSearchParams(url.slice(q + 1));
  for (const name of names) params.set(name, "[redacted]");
  return `${url.slice(0, q)}?${params}`;
}

/**
 * A root `onRequest` hook, registered before auth: a `token` query parameter on any route
 * answers 400 `JR2_ERR_REQUEST_INVALID` naming the bearer header as the fix — before auth, so
 * a right token in a URL is refused too.
 */
export const refuseTokenInUrl = fp(
  async (app: FastifyInstance) => {
    app.addHook("onRequest", async (request) => {
      if (hasTokenParameter(request.url))
        throw new Jr2Error("JR2_ERR_REQUEST_INVALID", { detail: TOKEN_IN_URL_DETAIL });
    });
  },
  { name: "jr2-refuse-token-in-url", fastify: "5.x" },
);

/**
 * Where the built console is: `@jr2/console`'s `dist/`, resolved from this installed package
 * (a workspace link in the repo, a copied folder in the image); null when the package is absent.
 */
export function consoleDistDir(): string | null {
  try {
    const pkg = createRequire(import.meta.url).resolve("@jr2/console/package.json");
    return join(dirname(pkg), "dist");
  } catch {
    return null;
  }
}

/** Options of {@link consoleRoutes}. `dir`: the built console's folder (default {@link consoleDistDir}). */
export interface ConsoleOptions {
  dir?: string | null;
}

const withHeaders = (reply: FastifyReply): FastifyReply => reply.headers(CONSOLE_HEADERS);

/**
 * Registers `GET /`, `GET /ui` (redirects) and `/ui/*` (the console's files; any other path
 * under `/ui/` but `/ui/assets/` answers `index.html`). A missing build is one warning line at
 * start-up and the API goes on serving; `/ui/` then answers 404.
 */
export async function consoleRoutes(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const dir = options.dir === undefined ? consoleDistDir() : options.dir;
  if (!dir || !existsSync(join(dir, "index.html"))) {
    app.log.warn(
      { dir },
      "web console not built: no index.html in @jr2/console's dist; run `pnpm build` (the API is served, /ui/ answers 404)",
    );
    return;
  }
  const page = { schema: { hide: true }, config: { auth: "open" as const } };
  // This plugin is encapsulated: the hook sees only its own routes (/, /ui, /ui/*), never the API's.
  app.addHook("onSend", async (_request, reply) => {
    withHeaders(reply);
  });
  await app.register(fastifyStatic, {
    root: dir,
    prefix: "/ui/",
    wildcard: false,
    index: false,
    cacheControl: false,
    // Hashed file names never change; index.html is always asked for again.
    setHeaders: (res, path) =>
      res.setHeader(
        "cache-control",
        path.endsWith(".html") ? "no-cache" : "public, max-age=31536000, immutable",
      ),
  });
  app.get("/", page, async (_request, reply) => reply.redirect("/ui/", 302));
  app.get("/ui", page, async (_request, reply) => reply.redirect("/ui/", 302));
  const index = async (_request: unknown, reply: FastifyReply) => reply.sendFile("index.html");
  app.get("/ui/", page, index);
  app.get("/ui/*", page, async (request, reply) => {
    // A missing hashed asset is a 404, never the page (the browser would run HTML as script).
    if (request.url.startsWith("/ui/assets/")) return reply.callNotFound();
    return index(request, reply);
  });
}
