import { Health } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";

/**
 * `GET /healthz` (open): `{ ok, version }`.
 * @see SPEC §4.1
 */
export const healthRoutes: FastifyPluginAsyncZod<{ version: string }> = async (app, { version }) => {
  app.get(
    "/healthz",
    { schema: { summary: "Liveness and version", response: { 200: Health } }, config: { auth: "open" } },
    async () => ({ ok: true, version }),
  );
};
