import { Health } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { RunHost } from "../../runs/run-host.js";
import { BOOT_HEADER, BOOT_ID } from "../boot-id.js";
import { PEER_CHALLENGE_HEADER, PEER_PROOF_HEADER, peerProof } from "../peer-credential.js";

/**
 * `GET /healthz` (open): `{ ok, version, store }`, and this process's boot id as `x-jr2-boot`
 * (how an instance checks that its advertised URL reaches itself, ADR-0280). A peer's challenge
 * (`x-jr2-peer-challenge`) is answered with `x-jr2-peer-proof` when `peerKey` is set (ADR-0281). While the run store refuses writes it still
 * answers **200**, with `store: "failing"` (ADR-0253): the process is alive and serves reads,
 * frozen runs are reloaded once writes succeed, and a restart — what an orchestrator does with
 * an unhealthy container — would not bring disk space back.
 * @see SPEC §4.1
 */
export const healthRoutes: FastifyPluginAsyncZod<{ version: string; peerKey?: string | undefined }> = async (
  app,
  { version, peerKey },
) => {
  app.get(
    "/healthz",
    {
      schema: { summary: "Liveness, version and the run store's health", response: { 200: Health } },
      config: { auth: "open" },
    },
    async (request, reply) => {
      reply.header(BOOT_HEADER, BOOT_ID);
      const nonce = request.headers[PEER_CHALLENGE_HEADER];
      if (peerKey && typeof nonce === "string" && /^[0-9a-f]{32}$/.test(nonce))
        reply.header(PEER_PROOF_HEADER, peerProof(peerKey, nonce, BOOT_ID));
      const host = (app as unknown as { runHost?: RunHost }).runHost;
      return { ok: true, version, ...(host?.storeHealth ? { store: host.storeHealth().store } : {}) };
    },
  );
};
