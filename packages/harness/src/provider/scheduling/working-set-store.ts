/**
 * Where a working set is kept across a Harness restart (issue 30 Rules; a lower folder's port, ADR-0160's layers):
 * the members of each endpoint's set and when each entered. The lower `provider/` layer may not
 * import the conversations store, so it defines this port; the in-memory implementation serves
 * tests and library use, and the Harness backs it with the durable store's generic records
 * (`kind = "kv-working-set"`, `key = endpoint`; wire/durable-ports.ts).
 * @see docs/adr/0430-kv-scheduling.md
 */

import type { SharedPrefix } from "./kv-accounting.js";

/**
 * One member of a working set as kept: conversation, estimated KV tokens, the prefix it shares
 * (absent in records an older Harness kept: counted whole), when it entered (ms).
 */
export interface KeptMember {
  conversation: string;
  estimate: number;
  prefix?: SharedPrefix;
  enteredAt: number;
}

/** The port. Calls are synchronous writes of a small record; a failing store throws. */
export interface WorkingSetStore {
  /** The members kept for `endpoint` (empty when none). */
  load(endpoint: string): KeptMember[];
  /** Replace the members kept for `endpoint`. */
  save(endpoint: string, members: KeptMember[]): void;
}

/** The default store: memory only (a restart starts every set empty). */
export function createMemoryWorkingSetStore(): WorkingSetStore {
  const sets = new Map<string, KeptMember[]>();
  return {
    load: (endpoint) => (sets.get(endpoint) ?? []).map((m) => ({ ...m })),
    save: (endpoint, members) => {
      sets.set(
        endpoint,
        members.map((m) => ({ ...m })),
      );
    },
  };
}
