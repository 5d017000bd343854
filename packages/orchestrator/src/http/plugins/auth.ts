import { Jr2Error } from "@jr2/wire";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { type AuthKeys, type Caller, checkBearer } from "../../turns/access.js";

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
 * @see SPEC §4.4
 */
export const authPlugin = fp(
  async (app: FastifyInstance, keys: AuthKeys) => {
    app.decorateRequest("caller", null);
    app.addHook("onRequest", async (request) => {
      const need = request.routeOptions.config?.auth ?? "open";
      if (need === "open") return;
      const check = checkBearer(request.headers.authorization, keys);
      if (!check.ok) throw new Jr2Error(check.code);
      if (need === "instance" && check.caller.kind !== "instance") throw new Jr2Error("JR2_ERR_AUTH_INVALID");
      request.caller = check.caller;
    });
  },
  { name: "jr2-auth", fastify: "5.x" },
);
