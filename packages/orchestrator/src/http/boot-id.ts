/**
 * This process's boot id: a random id `GET /healthz` sends as `x-jr2-boot`, so an instance can
 * tell that a URL reaches itself — not a peer, nor nothing (ADR-0280: `JR2_ADVERTISE_URL`).
 */
import { randomUUID } from "node:crypto";

/** The header `GET /healthz` carries the boot id in. */
export const BOOT_HEADER = "x-jr2-boot";

/** Random per process. */
export const BOOT_ID = randomUUID();
