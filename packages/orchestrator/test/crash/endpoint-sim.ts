/**
 * The crash harness's own model endpoint: a model-sim process it can SIGKILL and start again on
 * the same port (the endpoint-kill phase). model-sim keeps its request log in memory, so the
 * log is read before each kill and archived: `requests()` is every request every incarnation
 * received, renumbered in one sequence (each `raw` byte-exact, as model-sim recorded it).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import type { RecordedRequest } from "../../../conformance/src/index.js";

/** A model-sim process on a fixed port, killable, with its log kept across kills. */
export interface EndpointSim {
  /** `http://127.0.0.1:<port>` (the `/v1` base is `${url}/v1`). */
  url: string;
  /** Every request received so far, across restarts, `seq` 1, 2, … in one sequence. */
  requests(): Promise<RecordedRequest[]>;
  /** SIGKILLs the process (its log read first); `start()` brings it back on the same port. */
  kill(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Starts model-sim from `repoRoot`'s build on `port`. */
export async function startEndpointSim(repoRoot: string, port: number): Promise<EndpointSim> {
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const archive: RecordedRequest[] = [];
  const current = async (): Promise<RecordedRequest[]> => {
    try {
      const res = await fetch(`${url}/_sim/requests`);
      return res.ok ? ((await res.json()) as RecordedRequest[]) : [];
    } catch {
      return []; // down (being restarted): its log went with it, archived before the kill
    }
  };
  const renumber = (list: RecordedRequest[]) => list.map((r, i) => ({ ...r, seq: i + 1 }));
  const sim: EndpointSim = {
    url,
    async requests() {
      return renumber([...archive, ...(await current())]);
    },
    async kill() {
      archive.push(...(await current()));
      const proc = child;
      child = undefined;
      if (!proc || proc.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        proc.once("exit", () => resolve());
        proc.kill("SIGKILL");
      });
    },
    async start() {
      for (let attempt = 0; ; attempt++) {
        const proc = spawn(
          process.execPath,
          [join(repoRoot, "packages/model-sim/dist/main.js"), "--port", String(port)],
          {
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        const ready = await new Promise<boolean>((resolve) => {
          let out = "";
          const onData = (chunk: Buffer) => {
            out += chunk.toString();
            if (out.includes("model-sim listening on")) resolve(true);
          };
          proc.stdout?.on("data", onData);
          proc.stderr?.on("data", (chunk: Buffer) => {
            out += chunk.toString();
          });
          proc.once("exit", () => resolve(false));
        });
        if (ready) {
          child = proc;
          return;
        }
        // The port may still be held by the killed process for a moment.
        if (attempt >= 20) throw new Error(`model-sim did not start again on port ${port}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async close() {
      await sim.kill();
    },
  };
  await sim.start();
  return sim;
}
