import { AgentDefinition, Jr2Error, Notice } from "@jr2/wire";
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

/** The definition keys this Harness knows (§7.1; `mcp` since issue 29). */
const KNOWN_DEFINITION_KEYS: ReadonlySet<string> = new Set(Object.keys(AgentDefinition.shape));

/**
 * Definition skew (issue 29 rules, ADR-0231): unlike a notice, a definition key this Harness
 * does not know changes what the Agent is (its tools, its credentials), so running without it
 * would run a different Agent. The admission is refused with `JR2_ERR_DEFINITION_KEY_UNKNOWN`
 * (400) naming the key and this Harness's version; the Orchestrator faults the Turn
 * `bad-request` with both.
 * @throws Jr2Error `JR2_ERR_DEFINITION_KEY_UNKNOWN`
 */
export function refuseUnknownDefinitionKeys(version: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const body = request.body as { definition?: unknown } | undefined;
    const def = body?.definition;
    if (typeof def !== "object" || def === null || Array.isArray(def)) return;
    const unknown = Object.keys(def).filter((k) => !KNOWN_DEFINITION_KEYS.has(k));
    if (unknown.length === 0) return;
    throw new Jr2Error("JR2_ERR_DEFINITION_KEY_UNKNOWN", {
      key: unknown.join("`, `"),
      version,
      known: [...KNOWN_DEFINITION_KEYS].join(", "),
    });
  };
}
