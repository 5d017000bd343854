/**
 * Each served Machine's **source digest** (issue 22 §2): the sha256 of the workflow module file
 * it was loaded from, recorded by the loader and saved on each run beside its fingerprint. The
 * fingerprint hashes the Machine's shape, never function source, so a fixed input mapper or
 * action leaves it unchanged; the source digest is what tells a run faulted by its Machine
 * that the workflow changed since, and may be retried (ADR-0272).
 */
import { createHash } from "node:crypto";
import type { AnyStateMachine } from "xstate";

const digests = new WeakMap<AnyStateMachine, string>();

/** The sha256 (hex) of a module's bytes. */
export function sourceDigestOfBytes(bytes: string | Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Records `machine`'s source digest (the loader, once per load). */
export function recordSourceDigest(machine: AnyStateMachine, digest: string): void {
  digests.set(machine, digest);
}

/** `machine`'s source digest; undefined for a Machine not loaded from a file (tests, embedders). */
export function sourceDigestOf(machine: AnyStateMachine): string | undefined {
  return digests.get(machine);
}
