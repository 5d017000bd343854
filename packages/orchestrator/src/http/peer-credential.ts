/**
 * The peer credential of forwarded requests (issue 24 item 3, ADR-0281). Instances of one
 * cluster share `JR2_PEER_KEY`; a request one forwards to another carries, instead of the
 * caller's bearer token, an HMAC-SHA256 over who forwarded it, the method, the path, the time
 * and the caller it vouches for. A peer URL read from a lease row is trusted only when listed in
 * `JR2_PEERS` or when it proved it knows the key ({@link peerProof}, answered on `/healthz`).
 * @see SPEC §4.4; docs/adr/0281-peer-credential-and-known-peers.md
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Caller } from "../turns/access.js";

/** The header of the credential: `<unix ms>.<caller>.<hex mac>`. */
export const PEER_HEADER = "x-jr2-peer";
/** The header of a peer challenge sent to `/healthz` (a random nonce). */
export const PEER_CHALLENGE_HEADER = "x-jr2-peer-challenge";
/** The header of the answer to a challenge: {@link peerProof} of the nonce and the boot id. */
export const PEER_PROOF_HEADER = "x-jr2-peer-proof";
/** How far a credential's time may be from the receiver's clock (ms): skew plus transit. */
export const PEER_WINDOW_MS = 60_000;

/** What the MAC covers besides the time and the caller. */
export interface PeerRequest {
  from: string;
  method: string;
  /** The path and query as sent. */
  path: string;
}

function mac(key: string, parts: readonly string[]): string {
  return createHmac("sha256", key).update(parts.join("\n")).digest("hex");
}

function callerText(caller: Caller | null): string {
  // An open route authenticated no one: "none" vouches for no one at the owner either.
  if (caller === null) return "none";
  return caller.kind === "instance" ? "instance" : `sandbox:${caller.sandbox}`;
}

function callerOf(text: string): Caller | undefined {
  if (text === "instance") return { kind: "instance" };
  if (text.startsWith("sandbox:") && text.length > 8) return { kind: "sandbox", sandbox: text.slice(8) };
  return undefined;
}

/** The credential value for one forwarded request (`caller`: who the forwarder authenticated; null on an open route). */
export function signPeerRequest(
  key: string,
  request: PeerRequest,
  caller: Caller | null,
  nowMs = Date.now(),
): string {
  const who = encodeURIComponent(callerText(caller));
  return `${nowMs}.${who}.${mac(key, ["jr2-peer-request", request.from, request.method.toUpperCase(), request.path, String(nowMs), who])}`;
}

/**
 * Checks a credential: well formed, within {@link PEER_WINDOW_MS} of `nowMs`, and its MAC by
 * `key` (constant-time). Returns the caller it vouches for, or undefined when not valid.
 */
export function verifyPeerRequest(
  key: string,
  value: string | undefined,
  request: PeerRequest,
  nowMs = Date.now(),
): Caller | undefined {
  const m = /^(\d{1,16})\.([^.]+)\.([0-9a-f]{64})$/.exec(value ?? "");
  if (!m) return undefined;
  const [, time, who, given] = m as unknown as [string, string, string, string];
  if (Math.abs(Number(time) - nowMs) > PEER_WINDOW_MS) return undefined;
  const want = mac(key, [
    "jr2-peer-request",
    request.from,
    request.method.toUpperCase(),
    request.path,
    time,
    who,
  ]);
  if (!timingSafeEqual(Buffer.from(given, "hex"), Buffer.from(want, "hex"))) return undefined;
  let text: string;
  try {
    text = decodeURIComponent(who);
  } catch {
    return undefined;
  }
  return callerOf(text);
}

/** A fresh challenge nonce (hex, 128 bits). */
export function peerNonce(): string {
  return randomBytes(16).toString("hex");
}

/** The answer to a challenge: proves the key is known, bound to the nonce and the boot id. */
export function peerProof(key: string, nonce: string, bootId: string): string {
  return mac(key, ["jr2-peer-proof", nonce, bootId]);
}

/** True when `proof` answers `nonce` under `key` for `bootId` (constant-time). */
export function checkPeerProof(
  key: string,
  nonce: string,
  bootId: string,
  proof: string | undefined,
): boolean {
  if (!proof || !/^[0-9a-f]{64}$/.test(proof)) return false;
  return timingSafeEqual(Buffer.from(proof, "hex"), Buffer.from(peerProof(key, nonce, bootId), "hex"));
}

/** A URL's origin (`http://host:port`), the unit a peer is known by; undefined when not a URL. */
export function originOf(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).origin : undefined;
}
