/**
 * The advertised URL's check at start-up (ADR-0280): peers forward a run's requests to the URL
 * an instance writes into its lease rows (`JR2_ADVERTISE_URL`). One that does not reach this
 * process — a typo'd port, a host peers cannot resolve, another instance — leaves its runs
 * unreachable through every peer, so `jr2 serve` asks `<url>/healthz` once it listens and logs
 * an error naming the variable when the answer is not its own (`x-jr2-boot`). A warning only:
 * a URL may be reachable from the peers and not from the host itself (hairpin NAT).
 */
import type { Logger } from "pino";
import { BOOT_HEADER, BOOT_ID } from "../http/boot-id.js";

/** How long the probe waits (ms). */
const PROBE_MS = 3_000;

/**
 * Probes `advertiseUrl` and logs what a user must fix; never throws.
 * @param fetchImpl for tests
 * @returns true when the URL answered with this process's boot id
 */
export async function checkAdvertisedUrl(
  advertiseUrl: string,
  log: Pick<Logger, "info" | "error">,
  fetchImpl: typeof fetch = fetch,
): Promise<boolean> {
  const url = `${advertiseUrl.replace(/\/+$/, "")}/healthz`;
  let said: string;
  try {
    const res = await fetchImpl(url, { signal: AbortSignal.timeout(PROBE_MS) });
    await res.arrayBuffer().catch(() => undefined);
    if (res.headers.get(BOOT_HEADER) === BOOT_ID) {
      log.info({ advertiseUrl }, "JR2_ADVERTISE_URL reaches this instance");
      return true;
    }
    said = res.headers.get(BOOT_HEADER)
      ? "another jr2 instance answered there"
      : `something else answered there (HTTP ${res.status})`;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    said = `nothing answered there (${cause ?? (error instanceof Error ? error.name : String(error))})`;
  }
  log.error(
    { advertiseUrl },
    `JR2_ADVERTISE_URL ${advertiseUrl} does not reach this instance: ${said}. Peers forward this instance's runs there, so they cannot reach them — set JR2_ADVERTISE_URL to the URL the other instances reach this one at (e.g. http://10.0.0.5:7400)`,
  );
  return false;
}
