import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { Jr2Error, sandboxNameProblem } from "@jr2/wire";
import type { RegistrationScope } from "./registration-table.js";

/**
 * Who is calling, as its bearer token says (§4.4): the instance token (full trust: run and
 * Gate routes, every scope of the agent routes) or a sandbox token (only the agent routes of
 * registrations recorded against that sandbox).
 */
export type Caller = { kind: "instance" } | { kind: "sandbox"; sandbox: string };

/** The operator caller: full trust. */
export const INSTANCE_CALLER: Caller = { kind: "instance" };

/** The secrets tokens are checked against. */
export interface AuthKeys {
  /** `JR2_INSTANCE_TOKEN`. */
  instanceToken: string;
  /** `JR2_SANDBOX_KEY`, the HMAC key of sandbox tokens; absent = no sandbox token is valid. */
  sandboxKey?: string;
  /** `JR2_PEER_KEY`, the HMAC key of peer credentials (ADR-0281); absent = no forwarded request is accepted. */
  peerKey?: string | undefined;
}

/** What checking a bearer token found. */
export type TokenCheck =
  | { ok: true; caller: Caller }
  | { ok: false; code: "JR2_ERR_AUTH_MISSING" | "JR2_ERR_AUTH_INVALID" };

/**
 * Mints the token of one sandbox: `<sandbox>.<hex hmac-sha256(key, sandbox)>`.
 * @param key - `JR2_SANDBOX_KEY`.
 * @param sandbox - the sandbox name the `WorkspaceProvider` hands out (no `.` needed or forbidden:
 *   the MAC is everything after the last `.`); visible Latin-1 only, since the token travels in
 *   an HTTP header (`sandboxNameProblem` in @jr2/wire).
 * @throws Jr2Error `JR2_ERR_SANDBOX_NAME_INVALID` for a name no client could present (a space,
 *   a control character, a character above U+00FF): refused here, not at every request after.
 * @see SPEC §4.4, issue 16 §7
 * @example mintSandboxToken(process.env.JR2_SANDBOX_KEY!, "ws-1") // "ws-1.3f9c…"
 */
export function mintSandboxToken(key: string, sandbox: string): string {
  const reason = sandboxNameProblem(sandbox);
  if (reason) throw new Jr2Error("JR2_ERR_SANDBOX_NAME_INVALID", { sandbox, reason });
  return `${sandbox}.${macOf(key, sandbox)}`;
}

/**
 * Checks an `Authorization` header value. Constant-time compares (`timingSafeEqual`) for both
 * token kinds; the token is never logged or echoed.
 * @returns the caller, or the error code to answer 401 with: missing (no header, another scheme,
 *   or `Bearer` with no token) vs not valid (an unknown token, or more than one word after `Bearer`).
 * @see SPEC §4.4
 */
export function checkBearer(header: string | undefined, keys: AuthKeys): TokenCheck {
  // The scheme is case-insensitive (RFC 9110 §11.1). No bearer token at all is "missing"; a
  // bearer credential that is not one token (`Bearer tok extra`) is present but not valid.
  const rest = /^Bearer(?:\s+(.*))?$/is.exec(header?.trim() ?? "")?.[1]?.trim();
  if (!rest) return { ok: false, code: "JR2_ERR_AUTH_MISSING" };
  if (/\s/.test(rest)) return { ok: false, code: "JR2_ERR_AUTH_INVALID" };
  const token = rest;
  if (keys.instanceToken && sameSecret(token, keys.instanceToken))
    return { ok: true, caller: INSTANCE_CALLER };
  const dot = token.lastIndexOf(".");
  if (keys.sandboxKey && dot > 0) {
    const sandbox = token.slice(0, dot);
    if (sameSecret(token.slice(dot + 1), macOf(keys.sandboxKey, sandbox))) {
      return { ok: true, caller: { kind: "sandbox", sandbox } };
    }
  }
  return { ok: false, code: "JR2_ERR_AUTH_INVALID" };
}

/**
 * May `caller` reach a registration of `scope`? The instance token reaches every scope; a
 * sandbox token only its own sandbox's — `instance` included: that is the instance Harness's token (§4.4). A refused caller is answered
 * 404, as if the Turn did not exist.
 */
export function mayReach(caller: Caller, scope: RegistrationScope): boolean {
  if (caller.kind === "instance") return true;
  // The instance Harness's token is a sandbox token for `instance` (§4.4); an explicit-endpoint
  // Turn (`explicit:<url>`) is reachable by the instance token alone.
  return !scope.startsWith("explicit:") && caller.sandbox === scope;
}

function macOf(key: string, sandbox: string): string {
  return createHmac("sha256", key).update(sandbox).digest("hex");
}

/**
 * Constant-time equality of two secrets of possibly different lengths: their SHA-256 digests
 * (always 32 bytes) are compared, so neither the time nor an early length check tells a caller
 * how long the secret is or where a guess differs.
 */
function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
