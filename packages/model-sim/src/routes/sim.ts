import type { FastifyInstance } from "fastify";
import type { Simulator } from "../simulator.js";

/**
 * The simulator's own routes, for tests and benchmarks:
 * - `GET /_sim/requests` → `RecordedRequest[]` (every chat request, byte-exact, oldest first);
 * - `DELETE /_sim/requests` → 204, forgets them (and so the totals);
 * - `GET /_sim/stats` → `SimStats`, plus `kv` (`KvStats`: prefill tokens, cache hits,
 *   preemptions, simulated seconds) when the time model is on (`--time-scale`);
 * - `DELETE /_sim/cache` → 204, forgets every cached block.
 *
 * @see SPEC §9
 */
export function simRoutes(app: FastifyInstance, sim: Simulator): void {
  app.get("/_sim/requests", async () => sim.recorder.list());
  app.delete("/_sim/requests", async (_request, reply) => {
    sim.recorder.reset();
    return reply.code(204).send();
  });
  app.get("/_sim/stats", async () => ({
    ...sim.recorder.stats(),
    ...(sim.kv ? { kv: sim.kv.stats() } : {}),
  }));
  app.delete("/_sim/cache", async (_request, reply) => {
    sim.cache.clear();
    return reply.code(204).send();
  });
}
