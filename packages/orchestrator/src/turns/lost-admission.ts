import type { HarnessClient, HealthResult } from "./harness-client.js";

/**
 * An admission whose request failed in transit (the socket closed mid-request, e.g.
 * `UND_ERR_SOCKET` because the Harness died) may have arrived. It is admitted again only when
 * the Harness proves it lost it (issue 16 "provably lost", ADR-0037):
 * - it answers `/healthz` with a `bootId` other than the one read before the admission (a new
 *   process holds no conversation), or
 * - it answers 404 for the conversation's stream (it never seated it).
 * Otherwise the admission may be running there, and sending it again could run the task
 * twice: the Turn faults. A Harness that tells no `bootId` (older) is not asked further.
 */

/** How long the one stream read of the probe may take, ms (`wait=0`: a Harness answers at once). */
const PROBE_TIMEOUT_MS = 5_000;

/** What an admission that failed in transit turned out to be. */
export type InTransitVerdict =
  /** Provably lost: abort the old iid, then admit again (§5.3/§5.7's lost-conversation path). */
  | { kind: "lost"; why: string }
  /** It may have arrived, or the Harness never answered: fault `infra` / `unavailable`. */
  | { kind: "unknown"; detail: string }
  /** The Harness tells no bootId: today's behaviour (fault, nothing re-sent). */
  | { kind: "older" }
  | { kind: "stopped" };

/** What {@link judgeInTransit} needs; none may throw. */
export interface InTransitDeps {
  client: HarnessClient;
  iid: string;
  /** An offset this conversation issued (its ledger's), else `"0"`, the start of any stream. */
  offset: string;
  /** `/healthz` as read right before the admission; `undefined` when not read. */
  before: HealthResult | undefined;
  /** How long the Harness may take to answer `/healthz` again, ms. */
  windowMs: number;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** The wait before health read number `n + 1`, ms (jittered). */
  backoff(n: number): number;
  stopped(): boolean;
  /** Each wait for the Harness to answer (telemetry; spends no budget). */
  onWait(attempt: number, waitMs: number, error: string): void;
}

/**
 * Finds out whether an admission that failed in transit is provably lost: polls `/healthz`
 * (backoff, within `windowMs`) until the Harness answers, then compares bootIds and, for the
 * same process or an unknown baseline, reads the conversation's stream once (`wait=0`).
 * @returns the verdict; never throws
 * @see SPEC §5.5, §5.6; issue 16 item 5
 */
export async function judgeInTransit(deps: InTransitDeps): Promise<InTransitVerdict> {
  const { client } = deps;
  if (!client.health) return { kind: "older" };
  const url = client.endpoint.url;
  const before = deps.before?.kind === "up" ? deps.before.bootId : undefined;
  const started = deps.now();
  for (let n = 0; ; n++) {
    if (deps.stopped()) return { kind: "stopped" };
    const now = await client.health();
    if (now.kind === "up") {
      if (now.bootId === undefined) return { kind: "older" };
      if (before !== undefined && now.bootId !== before)
        return { kind: "lost", why: `the Harness at ${url} restarted (bootId ${before} → ${now.bootId})` };
      const page = await client.read(deps.iid, deps.offset, 0, AbortSignal.timeout(PROBE_TIMEOUT_MS));
      if (page.kind === "lost")
        return { kind: "lost", why: `the Harness at ${url} holds no conversation at this iid (404)` };
      if (page.kind !== "transport")
        return {
          kind: "unknown",
          detail:
            `the admission to the Harness at ${url} failed in transit and the Harness, still the same ` +
            `process${before === undefined ? " or one whose earlier bootId is unknown" : ""}, holds the ` +
            "conversation: the admission may have arrived, so it is not sent again",
        };
    }
    const error = now.kind === "down" ? now.error : "the stream could not be read";
    if (deps.now() - started >= deps.windowMs)
      return {
        kind: "unknown",
        detail: `the admission to the Harness at ${url} failed in transit and the Harness did not answer within ${Math.round(deps.windowMs / 1000)} s (${error})`,
      };
    const wait = deps.backoff(n);
    deps.onWait(n + 1, Math.round(wait), error);
    await deps.sleep(wait);
  }
}
