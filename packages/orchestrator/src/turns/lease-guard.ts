/**
 * The lease check before every Harness call (ADR-0280 "Letting go"): a client that asks
 * `holds()` before each admission, stream read (a follow's (re)connection, a drain), abort and
 * `/healthz` read, and sends nothing when this instance no longer holds the run's lease —
 * the call answers as one that never left the host, and the host has let the run go (its Turn
 * is stopped as at shutdown, so nothing retries).
 * @see SPEC §5.5, §7.1; ADR-0280
 */
import type { HarnessClient } from "./harness-client.js";

/** Why a guarded call was not sent. */
const NOT_HELD =
  "not sent: this Orchestrator instance no longer holds the run's lease (another instance hosts it now)";

/**
 * `client` with `holds()` asked (and awaited: it may ask the database, ADR-0283) before each call; false sends nothing: admit → `unsent`, read →
 * `transport`, abort → not ok, health → down. A read asks again when its answer comes and
 * drops an answer that came after the lease went. Never throws (as the client).
 */
export function leaseGuardedClient(
  client: HarnessClient,
  holds: () => boolean | Promise<boolean>,
): HarnessClient {
  const { health } = client;
  const guarded: HarnessClient = {
    endpoint: client.endpoint,
    admit: async (iid, body, traceparent) =>
      (await holds()) ? client.admit(iid, body, traceparent) : { kind: "unsent", error: NOT_HELD },
    // Asked again when the answer comes: a long-poll sent before a pause answers after it, when
    // another instance may have adopted the run — its events are that owner's to act on.
    read: async (iid, offset, waitSeconds, signal) => {
      if (!(await holds())) return { kind: "transport", error: NOT_HELD };
      const answer = await client.read(iid, offset, waitSeconds, signal);
      return (await holds()) ? answer : { kind: "transport", error: NOT_HELD };
    },
    abort: async (iid) => ((await holds()) ? client.abort(iid) : { ok: false, error: NOT_HELD }),
  };
  const { arrival } = client;
  if (arrival)
    guarded.arrival = async (iid, id) =>
      (await holds()) ? arrival(iid, id) : { kind: "cannot-tell", error: NOT_HELD };
  if (health) guarded.health = async () => ((await holds()) ? health() : { kind: "down", error: NOT_HELD });
  return guarded;
}
