import { expect } from "vitest";
import { type ModelEntry, readConversation, readRequestBody, type Stack } from "../src/index.js";

/** A thin client of the Orchestrator's HTTP API for the scenarios (instance token, §4.4). */
export function orchestratorClient(stack: Stack) {
  const headers = { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" };
  const url = (path: string) => `${stack.orchestratorUrl}${path}`;
  const answer = async (res: Response) => ({ status: res.status, body: await res.text() });
  return {
    async startRun(workflow: string, input?: unknown): Promise<string> {
      const res = await fetch(url(`/workflows/${workflow}/runs`), {
        method: "POST",
        headers,
        body: JSON.stringify(input === undefined ? {} : { input }),
      });
      const text = await res.text();
      if (res.status !== 201) throw new Error(`starting ${workflow}: ${res.status} ${text}`);
      return (JSON.parse(text) as { runId: string }).runId;
    },
    run: async (runId: string) => answer(await fetch(url(`/runs/${runId}`), { headers })),
    gateSend: async (runId: string, gateId: string, event: Record<string, unknown>) =>
      answer(
        await fetch(url(`/runs/${runId}/gates/${gateId}/events`), {
          method: "POST",
          headers,
          body: JSON.stringify(event),
        }),
      ),
    surface: async (iid: string) =>
      answer(await fetch(url(`/agents/${encodeURIComponent(iid)}/surface`), { headers })),
    pick: async (iid: string, name: string, args: unknown, toolCallId: string) =>
      answer(
        await fetch(url(`/agents/${encodeURIComponent(iid)}/picks`), {
          method: "POST",
          headers,
          body: JSON.stringify({ name, arguments: args, toolCallId }),
        }),
      ),
    /** The run feed's events, read once the run is no longer running (the stream ends then). */
    async feed(runId: string): Promise<unknown[]> {
      const text = await (await fetch(url(`/runs/${runId}/events`), { headers })).text();
      return text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => JSON.parse(l.slice(5)) as unknown);
    },
  };
}

export type OrchestratorClient = ReturnType<typeof orchestratorClient>;

/** Polls `probe` every 100 ms until it returns a value (not undefined), or fails naming `what`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The run detail's parsed body. */
export interface RunView {
  status: string;
  value: unknown;
  context: unknown;
  turns: Array<{ iid: string; agent: string; state: string; turnId: string | null }>;
  gates: Array<{ id: string; acceptsNow: string[] }>;
}

export async function runView(client: OrchestratorClient, runId: string): Promise<RunView> {
  const { status, body } = await client.run(runId);
  if (status !== 200) throw new Error(`GET /runs/${runId}: ${status} ${body}`);
  return JSON.parse(body) as RunView;
}

/** Waits until the run's value mentions `state` (a state name anywhere in its value) or it ended. */
export function untilState(client: OrchestratorClient, runId: string, state: string): Promise<RunView> {
  return until(`run ${runId} to reach ${state}`, async () => {
    const run = await runView(client, runId);
    return JSON.stringify(run.value).includes(`"${state}"`) || run.status !== "running" ? run : undefined;
  });
}

/** Waits until the run is no longer running. */
export function untilSettled(client: OrchestratorClient, runId: string): Promise<RunView> {
  return until(`run ${runId} to settle`, async () => {
    const run = await runView(client, runId);
    return run.status !== "running" ? run : undefined;
  });
}

/** A model table mapping each Agent's model name to a model-sim policy id (one id per conversation). */
export function modelTable(policies: Readonly<Record<string, string>>) {
  return (baseUrl: string): Record<string, ModelEntry> =>
    Object.fromEntries(
      Object.entries(policies).map(([name, id]) => [
        name,
        { baseUrl, id, contextWindow: 32768, maxTokens: 1024 },
      ]),
    );
}

/** Asserts a conformance verdict, printing its reason when it fails. */
export const expectOk = (v: { ok: boolean; reason?: string }) => expect(v.ok ? "ok" : v.reason).toBe("ok");

/** The text of the newest user message (task, nudge or restatement) of a raw request body. */
export function newestUserText(raw: string): string {
  const read = readRequestBody(raw);
  if (!read.ok) throw new Error(read.reason);
  const users = readConversation(read.body).filter(
    (m) => m.kind === "task" || m.kind === "nudge" || m.kind === "restatement",
  );
  return users.at(-1)?.text ?? "";
}
