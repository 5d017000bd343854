/**
 * Which URLs this instance forwards to (issue 24 item 3, ADR-0281): a URL read from a lease row
 * is a claim, not a fact — anyone who can write one row of the database could name a catcher.
 * A URL is forwarded to only when its origin is listed in `JR2_PEERS`, or when it answered a
 * challenge on `GET /healthz` with a proof only a holder of `JR2_PEER_KEY` can make (bound to the
 * nonce and its boot id). The challenge carries no token. Answers are kept a short while.
 */
import { BOOT_HEADER } from "./boot-id.js";
import {
  checkPeerProof,
  originOf,
  PEER_CHALLENGE_HEADER,
  PEER_PROOF_HEADER,
  peerNonce,
} from "./peer-credential.js";

/** How a peer is judged. */
export interface KnownPeerOptions {
  key: string;
  /** `JR2_PEERS`: URLs known without a challenge. */
  urls?: readonly string[];
  /** How long a proven URL stays known (ms); default 60 000. */
  provenMs?: number;
  /** How long a URL that failed stays unknown before it is challenged again (ms); default 2 000. */
  failedMs?: number;
  /** The challenge's time limit (ms); default 2 000. */
  timeoutMs?: number;
}

/**
 * The verdict on one URL: known; not known and why (for the coded error's detail); or not
 * answering at all (a peer that died: the caller answers as for an owner it cannot reach).
 */
export type PeerVerdict =
  | { known: true }
  | { known: false; why: string; unreachable?: undefined }
  | { known: false; why: string; unreachable: string };

/** The judge: `check(url)` answers from its cache or challenges the URL once. */
export interface KnownPeers {
  check(url: string): Promise<PeerVerdict>;
}

/** Builds the judge over `options` (fetch: the global one). */
export function knownPeers(options: KnownPeerOptions): KnownPeers {
  const listed = new Set((options.urls ?? []).map(originOf).filter((o): o is string => o !== undefined));
  const cache = new Map<string, { verdict: PeerVerdict; until: number }>();
  const provenMs = options.provenMs ?? 60_000;
  const failedMs = options.failedMs ?? 2_000;
  const timeoutMs = options.timeoutMs ?? 2_000;
  return {
    async check(url) {
      const origin = originOf(url);
      if (origin === undefined) return { known: false, why: "it is not a URL" };
      if (listed.has(origin)) return { known: true };
      const cached = cache.get(origin);
      if (cached && Date.now() < cached.until) return cached.verdict;
      const verdict = await challenge(origin, options.key, timeoutMs);
      // A URL that did not answer is asked again next time: its owner may just be restarting.
      if (!verdict.known && verdict.unreachable) return verdict;
      cache.set(origin, { verdict, until: Date.now() + (verdict.known ? provenMs : failedMs) });
      return verdict;
    },
  };
}

async function challenge(origin: string, key: string, timeoutMs: number): Promise<PeerVerdict> {
  const nonce = peerNonce();
  try {
    const res = await fetch(`${origin}/healthz`, {
      headers: { [PEER_CHALLENGE_HEADER]: nonce },
      redirect: "error",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel();
    const boot = res.headers.get(BOOT_HEADER);
    if (!boot)
      return { known: false, why: "its /healthz tells no boot id (not a jr2 Orchestrator, or an older one)" };
    if (checkPeerProof(key, nonce, boot, res.headers.get(PEER_PROOF_HEADER) ?? undefined))
      return { known: true };
    return { known: false, why: "it could not prove it holds this instance's JR2_PEER_KEY" };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    return { known: false, why: `its /healthz did not answer (${cause})`, unreachable: cause };
  }
}
