import { createHash, timingSafeEqual } from "node:crypto";
import { proveConnection } from "@jr2/http-edge";
import { Jr2Error } from "@jr2/wire";
import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * The bearer token of an `Authorization` value, read as the Orchestrator reads it (§4.4):
 * the scheme is case-insensitive (RFC 9110 §11.1). `missing`: no header, another scheme, or
 * `Bearer` with no token; `invalid`: more than one word after `Bearer`.
 */
export function bearerToken(header: string | undefined): { token: string } | "missing" | "invalid" {
  const rest = /^Bearer(?:\s+(.*))?$/is.exec(header?.trim() ?? "")?.[1]?.trim();
  if (!rest) return "missing";
  return /\s/.test(rest) ? "invalid" : { token: rest };
}

/**
 * The Harness bearer (§4.4): checked before any lookup, so 401 comes before 404 and a refused
 * caller cannot learn which conversations exist. The SHA-256 digests of the given and the
 * expected token are compared in constant time, so neither the time nor a length check tells
 * a caller the token's length (issue 16 §7). Never logged.
 * @throws Jr2Error `JR2_ERR_AUTH_MISSING` (no bearer token), `JR2_ERR_AUTH_INVALID` (a wrong one)
 */
export function bearerCheck(token: string) {
  const expected = digest(token);
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const given = bearerToken(request.headers.authorization);
    if (given === "missing") throw new Jr2Error("JR2_ERR_AUTH_MISSING");
    if (given === "invalid" || !timingSafeEqual(digest(given.token), expected))
      throw new Jr2Error("JR2_ERR_AUTH_INVALID");
    // Only an authenticated request earns its socket a place the connection guard keeps (ADR-0287).
    proveConnection(request.raw.socket);
  };
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
