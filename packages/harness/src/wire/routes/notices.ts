import { Notice } from "@jr2/wire";
import type { FastifyRequest } from "fastify";

/** The notice types this Harness renders (§7.3). */
const KNOWN_NOTICE_TYPES: ReadonlySet<string> = new Set(Notice.options.map((o) => o.shape.type.value));

/**
 * Admission tolerance (§7.6): a notice whose `type` this Harness does not know is left out and
 * logged, so a newer Orchestrator adding a notice type does not break every admission. A known
 * type with a bad shape still fails the schema (400).
 * @see SPEC §7.6
 */
export async function skipUnknownNotices(request: FastifyRequest): Promise<void> {
  const body = request.body as { notices?: unknown } | undefined;
  if (typeof body !== "object" || body === null || !Array.isArray(body.notices)) return;
  const kept = body.notices.filter((n: unknown) => {
    const type = typeof n === "object" && n !== null ? (n as { type?: unknown }).type : undefined;
    if (typeof type !== "string" || KNOWN_NOTICE_TYPES.has(type)) return true;
    request.log.info({ noticeType: type }, "skipped a notice of an unknown type");
    return false;
  });
  body.notices = kept;
}
