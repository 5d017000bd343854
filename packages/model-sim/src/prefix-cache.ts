import { createHash } from "node:crypto";

/** What one prompt found in the cache. Units: tokens. */
export interface CacheLookup {
  promptTokens: number;
  cachedTokens: number;
}

/**
 * A block cache counted like vLLM's automatic prefix caching.
 *
 * The prompt is cut into full blocks of `blockSize` tokens (a trailing partial block is never
 * cached). Block i's hash chains the hash of block i−1 with its own token ids, so a block
 * matches only when everything before it matches too. A lookup counts the leading blocks
 * already seen, never past `promptTokens − 1` (vLLM recomputes the last prompt token to get
 * logits, so a fully cached prompt still misses its last block), then inserts every full
 * block of the prompt. Seen blocks live in an LRU of `capacity` blocks.
 *
 * Unlike vLLM, blocks of generated tokens are not cached: only prompts are.
 *
 * @see SPEC §9
 */
export class PrefixCache {
  readonly blockSize: number;
  readonly capacity: number;
  // Map iteration order is insertion order: delete + set moves a block to the fresh end.
  readonly #blocks = new Map<string, true>();

  /**
   * @param blockSize - tokens per block (vLLM's default: 16).
   * @param capacity - blocks kept before the least recently used is evicted.
   * @throws RangeError when either is not a positive integer.
   */
  constructor(blockSize = 16, capacity = 65_536) {
    if (!Number.isInteger(blockSize) || blockSize < 1) throw new RangeError(`blockSize ${blockSize}`);
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity ${capacity}`);
    this.blockSize = blockSize;
    this.capacity = capacity;
  }

  /**
   * Count the cached tokens of a prompt, then remember its blocks.
   *
   * @param tokens - the prompt's token ids.
   * @param salt - keys the chain's root (template name, vLLM's `cache_salt`): prompts with
   *   different salts never share a block.
   */
  lookupAndInsert(tokens: readonly number[], salt = ""): CacheLookup {
    const hashes = this.#chain(tokens, salt);
    const maxHitBlocks = Math.floor(Math.max(tokens.length - 1, 0) / this.blockSize);
    let hits = 0;
    while (hits < maxHitBlocks && this.#blocks.has(hashes[hits]!)) hits++;
    for (const hash of hashes) {
      this.#blocks.delete(hash);
      this.#blocks.set(hash, true);
    }
    while (this.#blocks.size > this.capacity) {
      const oldest = this.#blocks.keys().next().value as string;
      this.#blocks.delete(oldest);
    }
    return { promptTokens: tokens.length, cachedTokens: hits * this.blockSize };
  }

  /**
   * Evict least recently used blocks until at most `blocks` remain (the time model: blocks held
   * by running sequences' generated tokens are not free for cached prefixes).
   */
  shrinkTo(blocks: number): void {
    while (this.#blocks.size > Math.max(blocks, 0))
      this.#blocks.delete(this.#blocks.keys().next().value as string);
  }

  /** Forget every block. */
  clear(): void {
    this.#blocks.clear();
  }

  /** Blocks currently held. */
  get size(): number {
    return this.#blocks.size;
  }

  #chain(tokens: readonly number[], salt: string): string[] {
    const hashes: string[] = [];
    let parent = createHash("sha256").update(`model-sim:${salt}`).digest("hex");
    const full = Math.floor(tokens.length / this.blockSize);
    for (let b = 0; b < full; b++) {
      const block = Int32Array.from(tokens.slice(b * this.blockSize, (b + 1) * this.blockSize));
      parent = createHash("sha256").update(parent).update(Buffer.from(block.buffer)).digest("hex");
      hashes.push(parent);
    }
    return hashes;
  }
}
