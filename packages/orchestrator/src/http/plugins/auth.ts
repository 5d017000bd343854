import { proveConnection } from "@jr2/http-edge";
import { Jr2Error } from "@jr2/wire";
import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { type AuthKeys, type Caller, checkBearer } from "../../turns/access.js";
import { PEER_HEADER, verifyPeerRequest } from "../peer-credential.js";
import { FORWARDED_BY } from "../run-routing.js";

/**
 * What a route requires (its `config.auth`): `open` (health, workflows, OpenAPI), `instance`
 * (runs and Gates: the instance token only), `agent` (surface and picks: the instance token or
 * a sandbox token, whose scope the run host checks per registration).
 * @see SPEC §4.1 (auth column), §4.4
 */
export type AuthNeed = "open" | "instance" | "agent";

declare module "fastify" {
  interface FastifyContextConfig {
    auth?: AuthNeed;
  }
  interface FastifyRequest {
    /** Who called, once the auth hook accepted the bearer token; `null` on open routes. */
    caller: Caller | null;
  }
}

/**
 * Checks the bearer token in `onRequest` — before the body is read and before any lookup, so a
 * refused caller learns nothing (401 before 404). Missing → `JR2_ERR_AUTH_MISSING`, not valid
 * (or a sandbox token on an instance route) → `JR2_ERR_AUTH_INVALID`. Never logs a token.
 * A request a peer forwarded (`x-jr2-forwarded-by`) is authenticated by its peer credential
 * instead (ADR-0281: HMAC by `JR2_PEER_KEY`, vouching for the caller the peer authenticated);
 * none, or one not valid → 401 `JR2_ERR_PEER_CREDENTIAL` naming `JR2_PEER_KEY`.
 * @see SPEC §4.4
 */
export const authPlugin = fp(
  async (app: FastifyInstance, keys: AuthKeys) => {
    app.decorateRequest("caller", null);
    app.addHook("onRequest", async (request) => {
      const need = request.routeOptions.config?.auth ?? "open";
      if (need === "open") return;
      const from = request.headers[FORWARDED_BY];
      const caller =
        from === undefined ? bearerCaller(request.headers.authorization, keys) : peerCaller(request, keys);
      if (need === "instance" && caller.kind !== "instance") throw new Jr2Error("JR2_ERR_AUTH_INVALID");
      request.caller = caller;
      // Only an authenticated request earns its socket a place the connection guard keeps (ADR-0287).
      proveConnection(request.raw.socket);
    });
  },
  { name: "jr2-auth", fastify: "5.x" },
);

function bearerCaller(header: string | undefined, keys: AuthKeys): Caller {
  const check = checkBearer(header, keys);
  if (!check.ok) throw new Jr2Error(check.code);
  return check.caller;
}

/** The caller a peer vouches for, by its credential over the method and the path (no query). */
function peerCaller(request: FastifyRequest, keys: AuthKeys): Caller {
  const said = request.headers[FORWARDED_BY];
  const from = Array.isArray(said) ? (said[0] ?? "") : (said ?? "");
  const credential = request.headers[PEER_HEADER];
  const path = (request.raw.url ?? "/").split("?")[0] ?? "/";
  const caller = keys.peerKey
    ? verifyPeerRequest(keys.peerKey, typeof credential === "string" ? credential : undefined, {
        from,
        method: request.method,
        path,
      })
    : undefined;
  if (caller) return caller;
  throw new Jr2Error("JR2_ERR_PEER_CREDENTIAL", {
    from,
    detail: !keys.peerKey
      ? "this instance has no JR2_PEER_KEY"
      : credential === undefined
        ? "the request carries none (a peer older than issue 24, or one without JR2_PEER_KEY)"
        : "it is not valid (another JR2_PEER_KEY, or a clock more than 60 s apart)",
  });
}
