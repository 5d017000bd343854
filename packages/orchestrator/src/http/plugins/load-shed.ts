/**
 * Shedding load early (issue 24 item 6, ADR-0286): 40 lanes of runs on a loaded box made
 * `/healthz` take 26–35 s and 34 run starts answer after their client's 30 s timeout (34 orphan
 * runs). Node gives no request queue to measure; what ages its requests is the event loop's
 * lag, measured here every 100 ms. While the lag seen in the last second is past `lagMs`, every
 * request but `/healthz` is answered at once, 503 `JR2_ERR_SERVICE_OVERLOADED` with `Retry-After`,
 * before auth or any store read — cheap, so the backlog drains and `/healthz` (never refused)
 * answers within a second. Clients retry: the Harness its picks, the CLI and the console their
 * starts with the same `Idempotency-Key` (ADR-0282).
 * @see ADR-0286
 */
import { performance } from "node:perf_hooks";
import { Jr2Error } from "@jr2/wire";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";

/** The bound `jr2 serve` sheds at by default (`JR2_SHED_LAG_MS`), ms; `buildOrchestrator` alone (embedded, tests) does not shed. */
export const DEFAULT_SHED_LAG_MS = 1_000;
/** How often the lag is sampled, ms. */
const SAMPLE_MS = 100;

/** Registers the shedding hook; `lagMs` 0 (the default) turns it off. */
export const loadShedPlugin = fp(
  async (app: FastifyInstance, options: { lagMs?: number }) => {
    const bound = options.lagMs ?? 0;
    if (bound <= 0) return;
    // Unset until the first tick: the app's own build (a busy start) is not load.
    let expected: number | undefined;
    let worst = 0;
    let worstAt = Number.NEGATIVE_INFINITY;
    const timer = setInterval(() => {
      const now = performance.now();
      const lag = expected === undefined ? 0 : Math.max(0, now - expected);
      expected = now + SAMPLE_MS;
      if (lag >= worst || now - worstAt > 1_000) {
        worst = lag;
        worstAt = now;
      }
    }, SAMPLE_MS);
    timer.unref();
    app.addHook("onClose", async () => clearInterval(timer));
    app.addHook("onRequest", async (request) => {
      if (request.url === "/healthz" || request.url.startsWith("/healthz?")) return;
      const now = performance.now();
      // The timer itself is late while the loop is blocked: count the wait since its last tick.
      const pending = expected === undefined ? 0 : Math.max(0, now - expected);
      const lag = Math.max(pending, now - worstAt <= 1_000 ? worst : 0);
      if (lag > bound)
        throw new Jr2Error("JR2_ERR_SERVICE_OVERLOADED", {
          lagMs: Math.round(lag),
          retryAfter: Math.max(1, Math.ceil(lag / 1000)),
        });
    });
  },
  { name: "jr2-load-shed" },
);
