import { RunSettledAnswer } from "@jr2/wire";
import { createFailoverFetch, parseOrchestratorUrls } from "./orchestrator-urls.js";

/**
 * `GET /runs/:runId/settled` with the sandbox token (issue 28 §6): what the Orchestrator's store
 * knows of a run, for the Worktree clean-up. Any failure — unreachable, a refusal, an unreadable
 * body — answers undefined, and the clean-up then removes nothing.
 */
export function createRunStateClient(opts: {
  url: string;
  token: string;
  fetch?: typeof fetch;
}): (runId: string) => Promise<{ state: "running" | "settled" | "deleted"; settledAt?: string } | undefined> {
  const send = createFailoverFetch({
    urls: parseOrchestratorUrls(opts.url),
    fetch: opts.fetch ?? globalThis.fetch.bind(globalThis),
  });
  return async (runId) => {
    try {
      const res = await send(`/runs/${encodeURIComponent(runId)}/settled`, {
        headers: { authorization: `Bearer ${opts.token}` },
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) return undefined;
      const parsed = RunSettledAnswer.safeParse(await res.json());
      if (!parsed.success) return undefined;
      const { state, settledAt } = parsed.data;
      return settledAt === undefined ? { state } : { state, settledAt };
    } catch {
      return undefined;
    }
  };
}
