/**
 * Every instance answers the whole API (issue 15 item 2, ADR-0280): a request naming a run
 * leased to another live instance is forwarded to its owner with `@fastify/reply-from` —
 * method, path and query, body and the caller's headers, marked with {@link FORWARDED_BY} —
 * but only to a known peer (`JR2_PEERS`, or a URL that proved it holds `JR2_PEER_KEY`; else
 * 503 `JR2_ERR_PEER_UNKNOWN`, nothing sent), and never with the caller's `Authorization`: it
 * carries a peer credential vouching for the caller this instance authenticated (ADR-0281).
 * The owner's answer is passed through as it came (status, headers, bytes).
 * A run whose owner stopped renewing, an owner that cannot be reached, and a forwarded request
 * for a run this instance does not host answer 503 `JR2_ERR_RUN_MOVING` with `Retry-After`.
 * Without ownership (SQLite, memory) nothing is registered: every request is answered here.
 * @see docs/adr/0280-postgres-store-leases-and-fencing.md
 */
import replyFrom from "@fastify/reply-from";
import { Jr2Error } from "@jr2/wire";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { RunOwnership } from "../../durability/store/ownership.js";
import type { RunHost } from "../../runs/run-host.js";
import { type KnownPeers, knownPeers } from "../known-peers.js";
import { PEER_HEADER, signPeerRequest } from "../peer-credential.js";
import { FORWARDED_BY, type RunRoute, routeRun, runOfRoute, unreachableRetryAfter } from "../run-routing.js";

/** Options of {@link forwardPlugin}. */
export interface ForwardOptions {
  host: Pick<RunHost, "isLive">;
  /** The store's leases; absent: the plugin does nothing. */
  ownership: RunOwnership | undefined;
  /** How long a forwarded request may take before it answers 503, in ms; default 30 000. */
  timeoutMs?: number;
  /** `JR2_PEER_KEY`; absent: nothing is forwarded (503 `JR2_ERR_PEER_UNKNOWN`). */
  peerKey?: string | undefined;
  /** `JR2_PEERS`: URLs forwarded to without a challenge. */
  peers?: readonly string[];
}

/**
 * Registers the forwarding hook (`preValidation`: after auth — a refused caller learns nothing
 * — and after the body was parsed, before this instance validates it: the owner does). Register
 * it after the auth plugin and before the routes.
 */
export const forwardPlugin = fp(
  async (app: FastifyInstance, options: ForwardOptions) => {
    const { ownership } = options;
    if (!ownership) return;
    const timeout = options.timeoutMs ?? 30_000;
    // No retry on a 503 or a reset: the caller decides (it may try its next instance).
    await app.register(replyFrom, { retryMethods: [], disableRequestLogging: true });
    const misadvertised = new Set<string>();
    const { peerKey } = options;
    const known = peerKey ? knownPeers({ key: peerKey, urls: options.peers ?? [] }) : undefined;
    app.addHook("preValidation", async (request, reply) => {
      const runId = runOfRoute(request.method, request.routeOptions.url, request.params);
      if (runId === undefined) return;
      const route = await decide(runId, request, options.host, ownership);
      if (route.kind === "here") return;
      if (route.kind === "moving") {
        if (request.headers[FORWARDED_BY] === ownership.instanceId)
          warnSelfForward(request, route.owner, ownership.instanceId, misadvertised);
        throw moving(runId, route);
      }
      request.log.debug(
        { runId, target: route.url, owner: route.holder.instanceId },
        "request forwarded to the run's owner",
      );
      if (!known || !peerKey)
        throw unknownPeer(route, "this instance has no JR2_PEER_KEY", ownership.leaseMs);
      await mustKnow(known, route, ownership.leaseMs, request.log);
      await forward(request, reply, route, {
        me: ownership.instanceId,
        leaseMs: ownership.leaseMs,
        timeout,
        peerKey,
      });
    });
  },
  { name: "jr2-forward", fastify: "5.x", dependencies: ["jr2-auth"] },
);

/**
 * The route of one request: its run live here, else by its lease.
 * @throws JR2_ERR_STORE_FAILING (503, Retry-After) when the lease cannot be read
 */
async function decide(
  runId: string,
  request: FastifyRequest,
  host: Pick<RunHost, "isLive">,
  ownership: RunOwnership,
): Promise<RunRoute> {
  if (host.isLive(runId)) return { kind: "here" };
  const said = request.headers[FORWARDED_BY];
  const holder = await ownership.holder(runId).catch((error: unknown) => {
    // The lease table cannot be read: nothing is decided here; the caller retries (ADR-0253).
    request.log.warn({ runId, err: error }, "the run's lease could not be read");
    throw new Jr2Error("JR2_ERR_STORE_FAILING", {
      detail: "the run's lease could not be read",
      retryAfter: 2,
    });
  });
  return routeRun(runId, {
    live: false,
    holder,
    me: ownership.instanceId,
    forwardedBy: Array.isArray(said) ? said[0] : said,
    leaseMs: ownership.leaseMs,
  });
}

/**
 * Sends the request to the owner and resolves once the answer went out (so the route's own
 * handler never runs). A transport failure (refused, reset, timeout) answers 503, never 5xx.
 */
function forward(
  request: FastifyRequest,
  reply: FastifyReply,
  route: Extract<RunRoute, { kind: "forward" }>,
  o: { me: string; leaseMs: number; timeout: number; peerKey: string },
): Promise<void> {
  const { holder } = route;
  const path = request.raw.url ?? "/";
  const pathname = path.split("?")[0] ?? "/";
  const credential = signPeerRequest(
    o.peerKey,
    { from: o.me, method: request.method, path: pathname },
    request.caller,
  );
  const done = new Promise<void>((resolve) => {
    reply.raw.once("close", () => resolve());
    reply.raw.once("finish", () => resolve());
  });
  // reply-from warns with a whole stack for each failed forward; the line below says it once, shorter.
  const log = request.log;
  request.log = log.child({}, { level: "error" });
  reply.from(`${route.url.replace(/\/+$/, "")}${pathname}`, {
    timeout: o.timeout,
    ...falsyBody(request),
    // The caller's bearer stays here: the owner trusts the peer credential, not a relayed token.
    rewriteRequestHeaders: (_request, headers) => {
      const { authorization: _dropped, ...rest } = headers;
      return { ...rest, [FORWARDED_BY]: o.me, [PEER_HEADER]: credential };
    },
    onError: (r, { error }) => {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
      log.info({ runId: holder.runId, target: route.url, cause }, "the run's owner cannot be reached");
      r.send(unreachable(route, cause, o.leaseMs));
    },
  });
  return done;
}

/**
 * @throws JR2_ERR_PEER_UNKNOWN (503) when the lease row's URL is not a known peer;
 *   JR2_ERR_RUN_MOVING (503) when it does not answer the challenge at all (as for any owner that
 *   cannot be reached)
 */
async function mustKnow(
  known: KnownPeers,
  route: Extract<RunRoute, { kind: "forward" }>,
  leaseMs: number,
  log: FastifyRequest["log"],
) {
  const verdict = await known.check(route.url);
  if (verdict.known) return;
  if (verdict.unreachable === undefined) {
    log.warn(
      { runId: route.holder.runId, target: route.url, why: verdict.why },
      "a lease names an unknown peer",
    );
    throw unknownPeer(route, verdict.why, leaseMs);
  }
  log.info(
    { runId: route.holder.runId, target: route.url, cause: verdict.unreachable },
    "the run's owner cannot be reached",
  );
  throw unreachable(route, verdict.unreachable, leaseMs);
}

function unreachable(
  route: Extract<RunRoute, { kind: "forward" }>,
  cause: string | undefined,
  leaseMs: number,
) {
  const { holder } = route;
  const retryAfter = unreachableRetryAfter(holder, leaseMs, Date.now());
  return new Jr2Error("JR2_ERR_RUN_MOVING", {
    runId: holder.runId,
    owner: holder.instanceId,
    retryAfter,
    detail: `its owner \`${holder.instanceId}\` at ${route.url} cannot be reached (${cause ?? "no answer"}); if it is gone, another instance adopts the run within ~${retryAfter} s`,
  });
}

function unknownPeer(route: Extract<RunRoute, { kind: "forward" }>, why: string, leaseMs: number): Jr2Error {
  return new Jr2Error("JR2_ERR_PEER_UNKNOWN", {
    runId: route.holder.runId,
    owner: route.holder.instanceId,
    url: route.url,
    detail: why,
    retryAfter: unreachableRetryAfter(route.holder, leaseMs, Date.now()),
  });
}

/**
 * The body to send when the parsed one is falsy (`null`, `false`, `0`, `""`): reply-from sends
 * only a truthy parsed body and would send none (the owner then read "the body is empty", not
 * the caller's bytes). JSON again as parsed; other types as their text. `{}` when truthy or absent.
 */
function falsyBody(request: FastifyRequest): { body?: string; contentType?: string } {
  const { body } = request;
  if (body === undefined || body) return {};
  const contentType = request.headers["content-type"] ?? "application/json";
  return { body: /json/i.test(contentType) ? JSON.stringify(body) : String(body), contentType };
}

/**
 * A request this instance forwarded came back to it: the owner's advertised URL (its lease
 * row's `owner_url`) reaches this instance, so every request for that owner's runs answers 503
 * here. Logged as an error once per owner id per process, naming the fix.
 */
function warnSelfForward(request: FastifyRequest, owner: string, me: string, warned: Set<string>): void {
  if (warned.has(owner)) return;
  warned.add(owner);
  request.log.error(
    { owner, instanceId: me },
    `instance \`${owner}\` advertises a URL that reaches this instance (\`${me}\`): its runs cannot be forwarded to it; set its JR2_ADVERTISE_URL to the URL its peers reach it at`,
  );
}

function moving(runId: string, route: Extract<RunRoute, { kind: "moving" }>): Jr2Error {
  return new Jr2Error("JR2_ERR_RUN_MOVING", {
    runId,
    owner: route.owner,
    retryAfter: route.retryAfter,
    detail: route.detail,
  });
}
