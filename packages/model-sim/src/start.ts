import type { AddressInfo } from "node:net";
import { type BuildModelSimOptions, buildModelSim } from "./app.js";
import type { KvStats } from "./kv/kv-engine.js";
import type { RecordedRequest, SimStats } from "./recorder.js";

/** Options of {@link startModelSim}: where to listen, plus the simulator's options. */
export interface StartModelSimOptions extends BuildModelSimOptions {
  /** TCP port; 0 (the default) lets the OS choose. */
  port?: number;
  /** Interface to listen on; `127.0.0.1` by default. */
  host?: string;
}

/** A running model-sim. */
export interface RunningModelSim {
  /** `http://<host>:<port>`, no trailing slash. */
  url: string;
  /** `url + "/v1"`: what an OpenAI client takes as its base URL. */
  baseUrl: string;
  /** Stop listening and close open connections. */
  close(): Promise<void>;
  /** Every chat request received so far, byte-exact, oldest first. */
  requests(): RecordedRequest[];
  /** Forget recorded requests and cached blocks. */
  reset(): void;
  /** Totals over the recorded requests. */
  stats(): SimStats;
  /** The time model's totals (`--time-scale`), or `undefined` when it is off. */
  kvStats(): KvStats | undefined;
}

/**
 * Start model-sim, an OpenAI-compatible model simulator, listening on 127.0.0.1.
 *
 * @param options - `port` (0), `host` (127.0.0.1), `blockSize` (16), `cacheBlocks` (65 536),
 *   `template` ("qwen3"), `maxModelLen` (131 072).
 * @returns once listening.
 * @throws the listen error (e.g. EADDRINUSE).
 * @see SPEC §9
 * @example
 * const sim = await startModelSim();
 * // point an OpenAI client at sim.baseUrl with model "obedient" or "script:request_changes,approve"
 * await sim.close();
 */
export async function startModelSim(options: StartModelSimOptions = {}): Promise<RunningModelSim> {
  const { port = 0, host = "127.0.0.1", ...buildOptions } = options;
  const { app, sim } = buildModelSim(buildOptions);
  await app.listen({ port, host });
  const address = app.server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    close: async () => {
      sim.kv?.stop();
      app.server.closeAllConnections();
      await app.close();
    },
    requests: () => sim.recorder.list(),
    reset: () => sim.reset(),
    stats: () => sim.recorder.stats(),
    kvStats: () => sim.kv?.stats(),
  };
}
