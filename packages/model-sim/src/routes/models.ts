import type { FastifyInstance } from "fastify";
import { FAULT_NAMES, POLICY_NAMES } from "../model-name.js";

/**
 * `GET /v1/models`: the bare policy names, then the bare fault names, each a model id
 * (`owned_by: "model-sim"`).
 * Parameterised forms (`worker:3`, `script:a,b`, `…@llama3`) are accepted without being listed.
 *
 * @see SPEC §9
 */
export function modelsRoute(app: FastifyInstance, created: number): void {
  app.get("/v1/models", async () => ({
    object: "list",
    data: [...POLICY_NAMES, ...FAULT_NAMES].map((id) => ({
      id,
      object: "model",
      created,
      owned_by: "model-sim",
    })),
  }));
}
