/**
 * Which bwrap binary every sandbox start runs (issue 26): `JR2_BWRAP` for a non-standard
 * install, else `bwrap` on PATH.
 */
export function bwrapBinary(): string {
  return process.env.JR2_BWRAP || "bwrap";
}
