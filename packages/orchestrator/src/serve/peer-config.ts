/**
 * The peer settings of a cluster (issue 24 item 3, ADR-0281), read with the PostgreSQL store:
 * `JR2_PEER_KEY` (required with `JR2_STORE_URL`: the shared HMAC key peers authenticate each
 * other's forwarded requests with; a secret like the instance token) and `JR2_PEERS` (optional:
 * comma-separated http(s) URLs of peers forwarded to without a challenge).
 */
import { Jr2Error, secretProblem } from "@jr2/wire";

/** What {@link readPeerConfig} returns. */
export interface PeerConfig {
  key: string;
  urls: string[];
}

/**
 * Reads the peer settings; `store` says whether `JR2_STORE_URL` is set (without it nothing is
 * forwarded and the variables are only checked when set).
 * @throws Jr2Error `JR2_ERR_CONFIG_INVALID` naming `JR2_PEER_KEY` (missing with a store URL, or
 *   a refused secret unless `dev`) or `JR2_PEERS` (an entry that is not an http(s) URL)
 */
export function readPeerConfig(env: NodeJS.ProcessEnv, store: boolean, dev: boolean): PeerConfig | undefined {
  const urls = (env.JR2_PEERS ?? "")
    .split(",")
    .map((u) => u.trim())
    .filter(Boolean);
  for (const url of urls)
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
      throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
        detail: `JR2_PEERS entry \`${url}\` is not an http(s) URL: list the URLs peers advertise (their JR2_ADVERTISE_URL), comma-separated`,
      });
  const key = env.JR2_PEER_KEY ?? "";
  if (key === "") {
    if (!store) return undefined;
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail:
        "JR2_PEER_KEY is not set: instances sharing JR2_STORE_URL authenticate the requests they forward to each other with it — give every instance the same value (generate one with `openssl rand -hex 32`)",
    });
  }
  const problem = dev ? undefined : secretProblem("JR2_PEER_KEY", key);
  if (problem)
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", { detail: `${problem} (it authenticates peers)` });
  return { key, urls };
}
