/**
 * Issue 15: the home-lab `postgres` profile (docker/compose.postgres.yaml) refuses a default
 * password — every use of JR2_PG_PASSWORD is `${JR2_PG_PASSWORD:?…}` — and compose.yaml, which
 * Compose interpolates whatever the profile, never requires it (the default stack needs none).
 * `config -q` of every combination is scripts/compose-smoke.sh's (CI).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const dockerDir = join(import.meta.dirname, "../../../../docker");
const postgres = readFileSync(join(dockerDir, "compose.postgres.yaml"), "utf8");
const base = readFileSync(join(dockerDir, "compose.yaml"), "utf8");

describe("docker/compose.postgres.yaml", () => {
  it("requires JR2_PG_PASSWORD wherever it is used, naming it, with no default", () => {
    const uses = postgres.match(/\$\{JR2_PG_PASSWORD[^}]*\}/g) ?? [];
    expect(uses.length).toBeGreaterThanOrEqual(2); // the server's password and the store URL
    for (const use of uses)
      expect(use).toMatch(/^\$\{JR2_PG_PASSWORD:\?set JR2_PG_PASSWORD in docker\/\.env/);
  });

  it("points the Orchestrator at the postgres service, behind the profile and its healthcheck", () => {
    expect(postgres).toMatch(/profiles: \["postgres"\]/);
    expect(postgres).toMatch(
      /JR2_STORE_URL: postgres:\/\/jr2:\$\{JR2_PG_PASSWORD:\?[^}]*\}@postgres:5432\/jr2/,
    );
    expect(postgres).toMatch(/pg_isready/);
    expect(postgres).toMatch(/condition: service_healthy/);
  });

  it("requires JR2_PEER_KEY for the Orchestrator on the shared store, naming it, with no default (ADR-0281)", () => {
    expect(postgres).toMatch(/JR2_PEER_KEY: \$\{JR2_PEER_KEY:\?set JR2_PEER_KEY in docker\/\.env[^}]*\}/);
    expect(base).not.toContain("${JR2_PEER_KEY");
  });

  it("leaves compose.yaml free of it: the default stack starts without a PostgreSQL password", () => {
    expect(base).not.toContain("${JR2_PG_PASSWORD");
  });
});
