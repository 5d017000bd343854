/**
 * Adversarial serving checks of the web console (issue 12, ADR-0451): no path under `/ui/`
 * reaches a file outside the built console, and every console answer — a 404 under
 * `/ui/assets/`, a HEAD, a redirect — carries the CSP.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_CSP, consoleRoutes } from "../../src/http/console.js";

describe("the console's serving under attack (ADR-0451)", () => {
  let root: string;
  const app = Fastify();
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "jr2-console-attack-"));
    const dir = join(root, "dist");
    mkdirSync(join(dir, "assets"), { recursive: true });
    writeFileSync(join(root, "secret.txt"), "SECRET-OUTSIDE-DIST");
    writeFileSync(join(dir, "index.html"), '<!doctype html><div id="root"></div>');
    writeFileSync(join(dir, "assets", "index-abc.js"), "console.log(1)");
    await app.register(consoleRoutes, { dir });
  });
  afterAll(async () => {
    await app.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("never serves a file outside the built console, however the path is spelled", async () => {
    for (const url of [
      "/ui/../secret.txt",
      "/ui/%2e%2e/secret.txt",
      "/ui/%2E%2E%2Fsecret.txt",
      "/ui/assets/..%2f..%2fsecret.txt",
      "/ui/assets/%2e%2e/%2e%2e/secret.txt",
      "/ui/..%5csecret.txt",
      "/ui//../secret.txt",
      "/ui/assets/..%252f..%252fsecret.txt",
      `/ui/${"a/".repeat(2000)}x`,
    ]) {
      const res = await app.inject({ url });
      expect(res.body, url).not.toContain("SECRET-OUTSIDE-DIST");
      expect(res.statusCode, url).toBeLessThan(500);
    }
  });

  it("puts the CSP on a 404 under /ui/assets/, a HEAD and a redirect", async () => {
    for (const [method, url] of [
      ["GET", "/ui/assets/missing.js"],
      ["GET", "/ui/assets/index-abc.js"],
      ["HEAD", "/ui/"],
      ["HEAD", "/ui/runs/r-1"],
      ["HEAD", "/ui/assets/index-abc.js"],
      ["GET", "/ui"],
      ["GET", "/"],
    ] as const) {
      const res = await app.inject({ method, url });
      expect(res.headers["content-security-policy"], `${method} ${url}`).toBe(CONSOLE_CSP);
    }
  });

  it("answers a missing asset 404 with no page in it", async () => {
    const res = await app.inject({ url: "/ui/assets/missing.js" });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('id="root"');
  });
});
