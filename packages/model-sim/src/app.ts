import Fastify, { type FastifyInstance } from "fastify";
import { chatCompletionsRoute } from "./routes/chat-completions.js";
import { modelsRoute } from "./routes/models.js";
import { simRoutes } from "./routes/sim.js";
import { type ModelSimOptions, Simulator } from "./simulator.js";

/** Options of {@link buildModelSim}: the simulator's, plus Fastify's logger switch. */
export interface BuildModelSimOptions extends ModelSimOptions {
  /** Fastify logger option (false: silent, the default). */
  logger?: boolean | Record<string, unknown>;
  /** Largest request body accepted, in bytes (32 MiB). */
  bodyLimit?: number;
}

/**
 * Build the model-sim app, unstarted (tests may `inject`).
 *
 * @returns the Fastify app and the simulator behind it.
 * @see SPEC §9
 * @example
 * const { app, sim } = buildModelSim();
 * const res = await app.inject({ method: "GET", url: "/v1/models" });
 */
export function buildModelSim(options: BuildModelSimOptions = {}): { app: FastifyInstance; sim: Simulator } {
  const { logger = false, bodyLimit = 32 * 1024 * 1024, ...simOptions } = options;
  const sim = new Simulator(simOptions);
  const app = Fastify({ logger, bodyLimit });
  // Keep every body as the raw string: recording must be byte-exact, and parsing is ours.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => done(null, body));
  chatCompletionsRoute(app, sim);
  modelsRoute(app, Math.floor((options.now?.() ?? new Date()).getTime() / 1000));
  simRoutes(app, sim);
  return { app, sim };
}
