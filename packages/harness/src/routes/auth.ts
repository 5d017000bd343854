import { timingSafeEqual } from "node:crypto";
import { Jr2Error } from "@jr2/wire";
import type { FastifyReply, FastifyRequest } from "fastify";

/** `Bearer <token>`: the scheme is case-insensitive (RFC 9110 §11.1), the token is not. */
const BEARER = /^bearer +(\S+)$/i;

/**
 * The Harness bearer (§4.4): checked before any lookup, so 401 comes before 404 and a refused
 * caller cannot learn which conversations exist. Constant-time; never logged.
 */
export function bearerCheck(token: string) {
  const expected = Buffer.from(token);
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const header = request.headers.authorization;
    if (!header) throw new Jr2Error("JR2_ERR_AUTH_MISSING");
    const given = Buffer.from(BEARER.exec(header.trim())?.[1] ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new Jr2Error("JR2_ERR_AUTH_INVALID");
  };
}
