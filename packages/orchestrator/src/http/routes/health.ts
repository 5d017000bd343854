import { Health } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { RunHost } from "../../runs/run-host.js";
import { BOOT_HEADER, BOOT_ID } from "../boot-id.js";

/**
 * `GET /healthz` (open): `{ ok, version, store }`, and this process's boot id as `x-jr2-boot`
 * (how an instance checks that its advertised URL reaches itself, ADR-0280). While the run store refuses writes it still
 * answers **200**, with `store: "failing"` (ADR-0253): the process is alive and serves reads,
 * frozen runs are reloaded once writes succeed, and a restart — what an orchestrator does with
 * an unhealthy container — would not bring disk space back.
 * @see SPEC §4.1
 */
export const healthRoutes: FastifyPluginAsyncZod<{ version: string }> = async (app, { version }) => {
  app.get(
    "/healthz",
    {
      schema: { summary: "Liveness, version and the run store's health", response: { 200: Health } },
      config: { auth: "open" },
    },
    async (_request, reply) => {
      reply.header(BOOT_HEADER, BOOT_ID);
      const host = (app as unknown as { runHost?: RunHost }).runHost;
      return { ok: true, version, ...(host?.storeHealth ? { store: host.storeHealth().store } : {}) };
    },
  );
};
