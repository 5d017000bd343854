import { TRANSCRIPT_FIELD_CAP_BYTES } from "@jr2/wire";

/**
 * The note for a transcript record's `capped` fields (field name → full UTF-8 byte count): the
 * stored text is cut at 64 KiB, so the reader must not take it for all of it. Null when none.
 */
export function cappedText(capped: Readonly<Record<string, number>> | undefined): string | null {
  const fields = Object.entries(capped ?? {});
  if (fields.length === 0) return null;
  return `cut when stored (each field keeps its first ${TRANSCRIPT_FIELD_CAP_BYTES} bytes): ${fields
    .map(([field, bytes]) => `${field} had ${bytes} bytes`)
    .join(", ")}`;
}
