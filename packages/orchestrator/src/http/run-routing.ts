/**
 * Where a request that names a run goes when several instances share one store (issue 15,
 * ADR-0280 "Every instance answers the whole API"): the pure decision and the route table it
 * reads. Effects (the lease read, the forward) are `plugins/forward.ts`'s.
 * @see SPEC §4.1, §4.2; docs/adr/0280-postgres-store-leases-and-fencing.md
 */
import type { LeaseHolder } from "../durability/store/ownership.js";
import { runIdOfIid } from "../runs/live-turns.js";

/** The hop header a forwarded request carries: the forwarding instance's id. Never forwarded again. */
export const FORWARDED_BY = "x-jr2-forwarded-by";

/** Where one request goes. */
export type RunRoute =
  /** This instance answers (the run is live here, held by it, or has no lease: the store's). */
  | { kind: "here" }
  /** The run's owner answers: forward to `url`. */
  | { kind: "forward"; url: string; holder: LeaseHolder }
  /** Nobody can answer now: 503 `JR2_ERR_RUN_MOVING` with `Retry-After: retryAfter` (seconds). */
  | { kind: "moving"; retryAfter: number; owner: string; detail: string };

/** What {@link routeRun} decides from. */
export interface RoutingFacts {
  /** True when the run is live in this process (memory, `running`). */
  live: boolean;
  /** The run's lease as the store says now (undefined: none — settled, drifted or unknown). */
  holder: LeaseHolder | undefined;
  /** This instance's id. */
  me: string;
  /** The hop header's value when the request was forwarded to us, else undefined. */
  forwardedBy: string | undefined;
  /** The lease length in ms (`JR2_LEASE_MS`): how long an adoption may take. */
  leaseMs: number;
}

/**
 * The decision (ADR-0280): live here → here; no lease → here (answered from the store, which
 * is safe for a settled run); leased under this instance's id but not live here (let go, being
 * restored, or another process given the same id) → moving: its Turns are not answered "gone"
 * by an instance that does not host them; held by another and expired → moving (the
 * owner stopped renewing, a survivor adopts within about a third of a lease); held by another
 * and current → forward, unless the request was already forwarded (no loops) → moving.
 */
export function routeRun(runId: string, facts: RoutingFacts): RunRoute {
  const { holder } = facts;
  if (facts.live || !holder) return { kind: "here" };
  const adoptionSeconds = secondsOf(facts.leaseMs / 3);
  if (holder.instanceId === facts.me)
    return {
      kind: "moving",
      retryAfter: adoptionSeconds,
      owner: holder.instanceId,
      detail: `run \`${runId}\` is leased under this instance's id but not live here (let go, or being restored); it is adopted within ~${adoptionSeconds} s`,
    };
  if (holder.expired)
    return {
      kind: "moving",
      retryAfter: adoptionSeconds,
      owner: holder.instanceId,
      detail: `its owner \`${holder.instanceId}\` stopped renewing its lease; another instance adopts it within ~${adoptionSeconds} s`,
    };
  if (facts.forwardedBy !== undefined)
    return {
      kind: "moving",
      retryAfter: adoptionSeconds,
      owner: holder.instanceId,
      detail: `instance \`${facts.forwardedBy}\` forwarded this request here, but this instance does not host run \`${runId}\` (its owner is \`${holder.instanceId}\`); a forwarded request is never forwarded again`,
    };
  return { kind: "forward", url: holder.url, holder };
}

/**
 * Seconds until a run whose owner cannot be reached is adopted: the rest of its lease (by our
 * clock against the database's expiry: an estimate) plus an adoption round; at least 1.
 */
export function unreachableRetryAfter(holder: LeaseHolder, leaseMs: number, nowMs: number): number {
  const rest = Math.max(0, Date.parse(holder.expiresAt) - nowMs);
  return secondsOf(rest + leaseMs / 3);
}

/**
 * The run a route names, from its pattern and params: `/runs/:runId…` and `/agents/:iid…`
 * (runId = the iid's first segment). Undefined for routes that are always answered here:
 * everything else, `POST /runs/:runId/fork` (it creates a run) and `GET /runs/:runId/events`
 * (served from the store on any instance, `runs/store-feed.ts`).
 */
export function runOfRoute(method: string, pattern: string | undefined, params: unknown): string | undefined {
  if (!pattern) return undefined;
  const p = (params ?? {}) as Record<string, unknown>;
  if (pattern.startsWith("/agents/:iid")) return typeof p.iid === "string" ? runIdOfIid(p.iid) : undefined;
  if (!pattern.startsWith("/runs/:runId")) return undefined;
  if (method === "POST" && pattern === "/runs/:runId/fork") return undefined;
  if (method === "GET" && pattern === "/runs/:runId/events") return undefined;
  return typeof p.runId === "string" && p.runId.length > 0 ? p.runId : undefined;
}

/** Whole seconds, rounded up, at least 1 (a `Retry-After` value). */
function secondsOf(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
