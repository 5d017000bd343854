import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ErrorBody, type RunFeedEvent, RunFeedEvent as RunFeedEventSchema } from "@jr2/wire";

/**
 * The `jr2` CLI's client of a running Orchestrator: where it is and the instance token.
 * Resolution order: flags, then env (`JR2_URL`, `JR2_INSTANCE_TOKEN`), then the `jr2.env` file
 * `pnpm start` writes into the data dir (`JR2_DATA_DIR`, default `./.data`).
 */
export interface CliTarget {
  url: string;
  token: string;
}

/** Reads `KEY=value` lines. */
function readEnvFile(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  const out: Record<string, string> = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/**
 * @throws Error naming what to set when no token can be found
 */
export function resolveTarget(flags: { url?: string; token?: string }, env: NodeJS.ProcessEnv): CliTarget {
  const envFile = join(resolve(env.JR2_DATA_DIR ?? ".data"), "jr2.env");
  const file = readEnvFile(envFile);
  const url = flags.url ?? env.JR2_URL ?? file.JR2_URL ?? `http://127.0.0.1:${env.JR2_PORT ?? 7400}`;
  const token = flags.token ?? env.JR2_INSTANCE_TOKEN ?? file.JR2_INSTANCE_TOKEN;
  if (!token) {
    throw new Error(
      `no instance token: pass --token, set JR2_INSTANCE_TOKEN, or point JR2_DATA_DIR at the data dir of a stack \`pnpm start\` runs (looked for ${envFile})`,
    );
  }
  return { url: url.replace(/\/+$/, ""), token };
}

/** An HTTP answer that was not 2xx, with the Orchestrator's coded body. */
export class CliHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody | undefined,
  ) {
    super(body ? `${body.error} (${body.code}, HTTP ${status})` : `HTTP ${status}`);
  }
}

/** Calls one route; answers the parsed JSON body or throws {@link CliHttpError}. */
export async function call<T>(target: CliTarget, method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${target.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${target.token}`,
        // Who answers a Gate is on the run's feed (`gate-answered.by`, ADR-0256).
        "x-jr2-client": "cli",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new Error(
      `cannot reach the Orchestrator at ${target.url} (${String((error as Error).cause ?? error)}); is it running?`,
    );
  }
  const payload = await res.json().catch(() => undefined);
  if (!res.ok) {
    const parsed = ErrorBody.safeParse(payload);
    throw new CliHttpError(res.status, parsed.success ? parsed.data : undefined);
  }
  return payload as T;
}

/**
 * Follows a run's feed (`GET /runs/:runId/events`, SSE) and yields each event until the
 * stream ends (the run settled). Reconnects after a dropped connection from the last seen seq.
 * @param from - the first seq to read (a control's own log entry: what came before is not followed)
 * @throws Error `cannot reach the Orchestrator at …` when the first connection fails (no
 *   Orchestrator: say so at once, as {@link call} does; retrying is for one that restarts)
 */
export async function* followFeed(target: CliTarget, runId: string, from = 0): AsyncGenerator<RunFeedEvent> {
  let since = from;
  let connected = false;
  for (let attempt = 0; attempt < 30; attempt++) {
    let res: Response;
    try {
      res = await fetch(`${target.url}/runs/${encodeURIComponent(runId)}/events?since=${since}`, {
        headers: { authorization: `Bearer ${target.token}`, accept: "text/event-stream" },
      });
      connected = true;
    } catch (error) {
      if (!connected)
        throw new Error(
          `cannot reach the Orchestrator at ${target.url} (${String((error as Error).cause ?? error)}); is it running?`,
        );
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    if (!res.ok || !res.body) {
      const payload = await res.json().catch(() => undefined);
      const parsed = ErrorBody.safeParse(payload);
      throw new CliHttpError(res.status, parsed.success ? parsed.data : undefined);
    }
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let cut = buffer.indexOf("\n\n");
        while (cut !== -1) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          cut = buffer.indexOf("\n\n");
          const data = frame
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trimStart())
            .join("\n");
          if (!data) continue;
          const event = RunFeedEventSchema.safeParse(JSON.parse(data));
          if (!event.success) continue;
          since = event.data.seq + 1;
          yield event.data;
          if (event.data.type === "status" && event.data.status !== "running") return;
        }
      }
      return; // the server ended the stream: the run is no longer live
    } catch {
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
