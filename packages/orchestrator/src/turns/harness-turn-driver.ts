import {
  defaultTurnConfig,
  startTurn,
  type TurnConfig,
  type TurnPorts,
  type TurnTelemetry,
} from "./agent-actor.js";
import { createHarnessClient, type HarnessClient, type HarnessEndpoint } from "./harness-client.js";
import { leaseGuardedClient } from "./lease-guard.js";
import { createOutboundQueues, type OutboundQueues } from "./outbound-queue.js";
import { type TurnTelemetry as FeedTelemetry, type TurnDriver, usageFeedEntry } from "./turn-driver.js";
import { drainUsage } from "./usage-drain.js";

/** Settings of the Harness Turn driver. */
export interface HarnessTurnDriverOptions {
  /** The bearer the Orchestrator presents to every Harness (`JR2_HARNESS_TOKEN`, §4.4). */
  harnessToken: string;
  config?: Partial<TurnConfig>;
  fetch?: typeof fetch;
  /** Makes the client of one Harness; default {@link createHarnessClient} (tests inject a fake). */
  client?: (endpoint: HarnessEndpoint) => HarnessClient;
  /** Shared per-iid FIFO of outbound calls (§5.3); one per host. */
  outbound?: OutboundQueues;
}

/**
 * The TurnDriver that runs each registered Turn on its Harness (SPEC §5): the registration
 * carries the placement (Harness URL, cwd); {@link startTurn} does the mechanics. A Turn whose
 * registration has no Harness is left to be played by hand.
 * @see SPEC §5.1–§5.7
 */
export function createHarnessTurnDriver(options: HarnessTurnDriverOptions): TurnDriver {
  const outbound = options.outbound ?? createOutboundQueues();
  const config: TurnConfig = { ...defaultTurnConfig, ...options.config };
  const clientOf = (endpoint: HarnessEndpoint) =>
    options.client ? options.client(endpoint) : createHarnessClient(endpoint, options.fetch);
  return {
    drainUsage: (target, record, signal, transcript) => {
      const { harnessUrl: url, instanceId, holdsLease } = target;
      const client = clientOf({ url, token: options.harnessToken, ...(instanceId ? { instanceId } : {}) });
      // Checked before each read (ADR-0280).
      const guarded = holdsLease ? leaseGuardedClient(client, holdsLease) : client;
      return drainUsage(guarded, target, record, signal, { ...(transcript ? { transcript } : {}) });
    },
    async abortOwed(target) {
      const { harnessUrl: url, instanceId, holdsLease, iid } = target;
      const raw = clientOf({ url, token: options.harnessToken, ...(instanceId ? { instanceId } : {}) });
      const client = holdsLease ? leaseGuardedClient(raw, holdsLease) : raw;
      // In the iid's FIFO: sent before any admission the restored Turn queues on it (§5.3).
      const answer = await outbound.run(iid, () => client.abort(iid)).catch(() => ({ ok: false }));
      return answer.ok;
    },
    start(context) {
      const { registration, turn } = context;
      if (!registration.harnessUrl) {
        context.log.warn("Turn has no Harness; it is played by hand");
        return () => {};
      }
      const { instanceId } = context;
      const endpoint = {
        url: registration.harnessUrl,
        token: options.harnessToken,
        ...(instanceId ? { instanceId } : {}),
      };
      const raw = clientOf(endpoint);
      // No call leaves for a run whose lease this instance lost (ADR-0280).
      const holdsLease = context.holdsLease?.bind(context);
      const client = holdsLease ? leaseGuardedClient(raw, holdsLease) : raw;
      const ports: TurnPorts = {
        input: { ...turn.input, iid: registration.iid },
        definition: turn.definition,
        client,
        ...(registration.cwd ? { cwd: registration.cwd } : {}),
        ...(registration.statePath ? { state: registration.statePath } : {}),
        ...(registration.network ? { network: registration.network } : {}),
        ...(context.traceparent ? { traceparent: context.traceparent } : {}),
        outbound,
        config,
        allowed: () => context.allowed(),
        isOpen: () => context.isOpen(),
        atRest: () => context.atRest(),
        lastAnswer: () => context.lastAnswer(),
        watch: (onChange) => context.watch(onChange),
        ledgerRead: (iid) => context.ledgerRead(iid),
        ledgerWrite: (iid, entry) => context.ledgerWrite(iid, entry),
        reseat: () => context.reseat(),
        recordHistory: (iid, part) => context.recordHistory?.(iid, part),
        historyOf: (iid) => context.historyOf?.(iid),
        telemetry: (event) => {
          if (event.type === "usage" && context.recordUsage) {
            // Keyed with the conversation the Turn reads now (a reseat moves it, §5.3).
            context.recordUsage({ ...event, iid: context.registration.iid });
          } else if (event.type === "transcript") {
            const { submissionId, position, entry } = event;
            context.recordTranscript?.({ submissionId, position, entry });
          } else context.telemetry(toFeed(event, turn.input.agentName));
        },
        recordCommits: (commits) => context.recordCommits?.(commits),
        fault: (reason, detail, cause) => context.fault(reason, detail, cause),
        aborted: (iid) => context.abortAcknowledged?.(iid),
        log: (level, msg, fields) => context.log[level](fields ?? {}, msg),
        setTimeout: (fn, ms) => setTimeout(fn, ms),
        clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
        random: Math.random,
      };
      const handle = startTurn(ports);
      return () => {
        handle.stop({ shutdown: context.shuttingDown?.() === true });
        // A fresh conversation is never admitted again once its Turn is over (issue 27).
        context.dropHistory?.(context.registration.iid);
      };
    },
  };
}

/** Maps the mechanics' telemetry onto run-feed entries (the host adds `child`; no iids, §5.6). */
function toFeed(event: Exclude<TurnTelemetry, { type: "transcript" }>, agent: string): FeedTelemetry {
  switch (event.type) {
    case "admission":
      return { type: "admission", agent, kind: event.kind, allowed: event.allowed };
    case "usage":
      return usageFeedEntry(event);
    case "retry":
      return event;
    case "text-call":
      return { type: "text-call", agent, ...(event.where ? { where: event.where } : {}) };
    case "warning":
      return { type: "warning", message: event.message };
    case "queued":
      return event;
    case "fault":
      // The detail ("the Harness at … has no model `writer`; …") is what a reader needs to act.
      return {
        type: "fault",
        reason: event.reason,
        ...(event.detail ? { detail: event.detail } : {}),
        ...(event.cause ? { cause: event.cause } : {}),
      };
  }
}
