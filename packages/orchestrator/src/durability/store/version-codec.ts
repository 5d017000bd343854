/**
 * How a run's versions are stored compactly (issue 22 §4, ADR-0277), the same in every store.
 * A version's blob text (the RunBlob's JSON, byte for byte) is kept in one of three codecs:
 * - none (`codec` NULL): the text in `blob` as it is — every row written before migration 9
 *   (SQLite) / 3 (PostgreSQL), read as it is and never rewritten;
 * - `deflate`: raw DEFLATE of the text in `packed` — a run's key version;
 * - `deflate-dict`: raw DEFLATE with the text of the run's key version `base` as the preset
 *   dictionary (RFC 1951/zlib's `dictionary`): a small delta, since the versions of one run
 *   share nearly every byte; an unchanged blob costs ~20 bytes.
 * A version reads at most one other row (its key), and folding (`foldVersions`) never leaves a
 * kept version whose key was dropped: such rows are re-encoded against the oldest kept row first.
 * Pure: the stores load rows and apply what this decides.
 * @see SPEC §8; ADR-0270
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { VersionCause } from "@jr2/wire";

/** A stored version's codec (NULL: plain text in `blob`). */
export type VersionCodec = "deflate" | "deflate-dict" | null;

/** A run stays keyed to one version for at most this many versions; the next is a new key. */
export const KEY_SPAN = 64;

/** The causes a settled run's history keeps when it is folded (everything but `step`). */
export function keptCause(cause: VersionCause): boolean {
  return cause.kind !== "step";
}

/** One row as the codec reads it. `blob` is the text of a plain row ('' for a packed one). */
export interface PackedRow {
  version: number;
  codec: VersionCodec;
  base: number | null;
  blob: string;
  packed: Buffer | null;
}

/** What a new version is written as: its codec, key and bytes. */
export interface Packing {
  codec: Exclude<VersionCodec, null>;
  base: number | null;
  packed: Buffer;
}

/**
 * Packs `text` as version `version`: a delta against `key` (the run's newest key row, decoded)
 * when there is one within {@link KEY_SPAN}, else as a new key.
 */
export function packVersion(
  text: string,
  version: number,
  key: { version: number; text: string } | undefined,
): Packing {
  if (key && version - key.version <= KEY_SPAN)
    return {
      codec: "deflate-dict",
      base: key.version,
      packed: deflateRawSync(text, { level: 9, dictionary: Buffer.from(key.text) }),
    };
  return { codec: "deflate", base: null, packed: deflateRawSync(text, { level: 9 }) };
}

/**
 * The blob text of `row`; `keyText` reads the text of its key (a `deflate-dict` row's `base`).
 * @throws Error naming the version when its key is missing or a byte is wrong
 */
export function unpackVersion(row: PackedRow, keyText: (version: number) => string | undefined): string {
  if (row.codec === null) return row.blob;
  if (!row.packed) throw new Error(`version ${row.version} is packed (${row.codec}) but has no bytes`);
  if (row.codec === "deflate") return inflateRawSync(row.packed).toString("utf8");
  const dictionary = row.base === null ? undefined : keyText(row.base);
  if (dictionary === undefined)
    throw new Error(`version ${row.version}'s key version ${row.base} is missing`);
  return inflateRawSync(row.packed, { dictionary: Buffer.from(dictionary) }).toString("utf8");
}

/** A run's rows at its fold: with their causes. */
export interface FoldRow extends PackedRow {
  cause: VersionCause;
}

/** What a fold does: rows to delete, rows to rewrite (re-keyed) before that. */
export interface FoldPlan {
  drop: number[];
  rewrite: Array<{ version: number } & Packing>;
}

/**
 * Folds a settled run's versions (issue 22 §4): `step` versions are dropped, then the oldest of
 * the rest beyond `versionsKept` (the newest — the settling save — always stays). A kept
 * `deflate-dict` row whose key is dropped is re-encoded: the oldest kept packed row becomes the
 * key. Plain rows (before the migration) are never rewritten. `rows` oldest first.
 */
export function foldVersions(rows: readonly FoldRow[], versionsKept: number): FoldPlan {
  const newest = rows.at(-1);
  if (!newest) return { drop: [], rewrite: [] };
  const kept = rows.filter((r) => r === newest || keptCause(r.cause)).slice(-Math.max(1, versionsKept));
  const keptSet = new Set(kept.map((r) => r.version));
  const drop = rows.filter((r) => !keptSet.has(r.version)).map((r) => r.version);
  const orphans = kept.filter((r) => r.codec === "deflate-dict" && r.base !== null && !keptSet.has(r.base));
  if (orphans.length === 0) return { drop, rewrite: [] };
  const byVersion = new Map(rows.map((r) => [r.version, r]));
  const textOf = (r: PackedRow): string => unpackVersion(r, (v) => textOfVersion(byVersion, v));
  // The new key: the oldest kept packed row that is an orphan or a key itself, re-encoded whole.
  const packedKept = kept.filter((r) => r.codec !== null);
  const newKey = packedKept.find((r) => orphans.includes(r) || r.codec === "deflate")!;
  const keyText = textOf(newKey);
  const rewrite: FoldPlan["rewrite"] = [];
  if (newKey.codec !== "deflate")
    rewrite.push({ version: newKey.version, ...packVersion(keyText, newKey.version, undefined) });
  for (const r of orphans)
    if (r !== newKey)
      rewrite.push({
        version: r.version,
        ...packVersion(textOf(r), r.version, { version: newKey.version, text: keyText }),
      });
  return { drop, rewrite };
}

function textOfVersion(rows: Map<number, PackedRow>, version: number): string | undefined {
  const row = rows.get(version);
  return row ? unpackVersion(row, () => undefined) : undefined;
}
