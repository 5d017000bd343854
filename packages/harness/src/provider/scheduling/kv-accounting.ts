/**
 * How a working set counts KV as the engine holds it (ADR-0431): vLLM's prefix cache and
 * llama-server's keep a block that several sequences share once, and every conversation of one
 * Agent on an endpoint opens with the same system prompt + tools block. So a member holds its
 * estimate less its shared prefix, and each distinct prefix among the members is held once.
 * Counting the prefix per member (ADR-0430's first estimate) admitted ~12 review runs where
 * 48,000 tokens hold 20, and scheduling then slowed runs down with no cache pressure at all.
 */

/**
 * The part of a request's prompt other conversations may share: `key` identifies its bytes
 * (a hash of the system prompt + tools block), `tokens` its size in whole KV blocks.
 */
export interface SharedPrefix {
  key: string;
  tokens: number;
}

/** A member or a waiter as the accounting sees it: its estimate (tokens) and shared prefix. */
export interface KvHolder {
  estimate: number;
  prefix?: SharedPrefix | undefined;
}

/** The prefix tokens of `h` that may be shared (never more than its estimate). */
function prefixTokens(h: KvHolder): number {
  return h.prefix ? Math.min(Math.max(0, h.prefix.tokens), h.estimate) : 0;
}

/** Tokens `holders` hold together: each one's unshared tail, plus each distinct prefix once. */
export function heldTokens(holders: Iterable<KvHolder>): number {
  const prefixes = new Map<string, number>();
  let n = 0;
  for (const h of holders) {
    const p = prefixTokens(h);
    n += h.estimate - p;
    if (h.prefix) prefixes.set(h.prefix.key, Math.max(prefixes.get(h.prefix.key) ?? 0, p));
  }
  for (const p of prefixes.values()) n += p;
  return n;
}

/** Tokens `candidate` adds to `members`: its estimate, less its prefix when a member holds it. */
export function addedTokens(members: Iterable<KvHolder>, candidate: KvHolder): number {
  const list = [...members];
  return heldTokens([...list, candidate]) - heldTokens(list);
}
