/**
 * The web console's serving (issue 12, ADR-0451): `/` redirects to `/ui/`, any `/ui/*` path
 * answers the page (a deep link survives a reload) with the console's CSP, a missing hashed
 * asset is a 404, a missing build is one warning and no crash; a `token` query parameter on any
 * route answers 400 before auth and its value is in no log line; `GET /workflows/:name/chart`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { MachineChart } from "@jr2/wire";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_CSP, consoleRoutes, hasTokenParameter, redactTokenInUrl } from "../../src/http/console.js";
import { buildOrchestrator, createLogger } from "../../src/index.js";
import { machine as review } from "../fixtures/plain-review/review.js";
import { flow, INSTANCE_TOKEN, SANDBOX_KEY } from "./fixture.js";

const ISSUE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

describe("serving the built console (ADR-0451)", () => {
  let dir: string;
  const app = Fastify();
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "jr2-console-"));
    mkdirSync(join(dir, "assets"));
    writeFileSync(join(dir, "index.html"), '<!doctype html><div id="root"></div>');
    writeFileSync(join(dir, "assets", "index-abc.js"), "console.log(1)");
    await app.register(consoleRoutes, { dir });
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("redirects / and /ui to /ui/", async () => {
    for (const url of ["/", "/ui"]) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(302);
      expect(res.headers.location).toBe("/ui/");
      expect(res.headers["content-security-policy"]).toBe(ISSUE_CSP);
    }
  });

  it("answers the page for any /ui/* path, with the issue's CSP and hardening headers", async () => {
    expect(CONSOLE_CSP).toBe(ISSUE_CSP);
    for (const url of ["/ui/", "/ui/runs/r-1", "/ui/runs/r-1/turns/t-2", "/ui/workflows/review"]) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toContain('<div id="root">');
      expect(res.headers["content-security-policy"]).toBe(ISSUE_CSP);
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["x-frame-options"]).toBe("DENY");
      expect(res.headers["cache-control"]).toBe("no-cache");
    }
  });

  it("serves an asset as itself, cached for good, and a missing one as 404 — never the page", async () => {
    const js = await app.inject({ url: "/ui/assets/index-abc.js" });
    expect(js.statusCode).toBe(200);
    expect(js.headers["content-type"]).toContain("javascript");
    expect(js.headers["content-security-policy"]).toBe(ISSUE_CSP);
    expect(js.headers["cache-control"]).toContain("immutable");
    const gone = await app.inject({ url: "/ui/assets/index-old.js" });
    expect(gone.statusCode).toBe(404);
    expect(gone.body).not.toContain("root");
  });

  it("logs one warning and serves no page when the build is missing", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _e, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const bare = Fastify({ loggerInstance: createLogger({ destination: sink }) });
    await bare.register(consoleRoutes, { dir: join(dir, "no-such-dist") });
    expect((await bare.inject({ url: "/ui/" })).statusCode).toBe(404);
    await bare.close();
    expect(lines.filter((l) => l.includes("web console not built"))).toHaveLength(1);
  });
});

describe("a token in a URL (issue 12 rules)", () => {
  it("is seen in any spelling of the query string, and only there", () => {
    expect(hasTokenParameter("/runs?token=x")).toBe(true);
    expect(hasTokenParameter("/runs?limit=1&token=")).toBe(true);
    expect(hasTokenParameter("/runs?tokens=x")).toBe(false);
    expect(hasTokenParameter("/token")).toBe(false);
    expect(redactTokenInUrl({ url: "/runs?limit=1&token=s3cret" })).toBe(
      "/runs?limit=1&token=%5Bredacted%5D",
    );
    expect(redactTokenInUrl({ url: "/runs?limit=1" })).toBe("/runs?limit=1");
  });

  it("answers 400 on every route — before auth, so a right token too — and no log line holds it", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _e, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const app = await buildOrchestrator({
      workflows: new Map([["flow", flow]]),
      auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY },
      logger: createLogger({ level: "info", destination: sink }),
    });
    for (const url of ["/runs", "/healthz", "/workflows", "/ui/", "/nowhere", "/runs/r/events"]) {
      const res = await app.inject({ url: `${url}?token=${INSTANCE_TOKEN}` });
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toMatchObject({ code: "JR2_ERR_REQUEST_INVALID" });
      expect(res.json().error).toContain("Authorization: Bearer <token>");
    }
    // The console's headers stay on the console's routes.
    expect((await app.inject({ url: "/healthz" })).headers["content-security-policy"]).toBeUndefined();
    await app.close();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("").includes(INSTANCE_TOKEN)).toBe(false);
  });
});

describe("GET /workflows/:name/chart", () => {
  it("lays out each Machine of review as nodes and transitions, open like the Menu", async () => {
    const app = await buildOrchestrator({
      workflows: new Map([["review", review]]),
      auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY },
    });
    const res = await app.inject({ url: "/workflows/review/chart" });
    expect(res.statusCode).toBe(200);
    const chart = MachineChart.parse(res.json());
    const root = chart.machines[0];
    expect(root?.path).toBe("");
    expect(root?.nodes.map((n) => n.path)).toEqual([
      "",
      "working",
      "awaitingMerge",
      "done",
      "rejected",
      "failed",
    ]);
    expect(root?.nodes.find((n) => n.path === "working")?.initial).toBe(true);
    expect(root?.edges).toContainEqual({ from: "awaitingMerge", to: "done", event: "merge", guarded: false });
    const body = chart.machines.find((m) => m.id === "review-body");
    expect(body?.edges).toContainEqual({
      from: "review",
      to: "fix",
      event: "request_changes",
      guarded: true,
    });
    expect(body?.nodes.find((n) => n.path === "implement")?.invokes).toEqual(["coder"]);
    expect((await app.inject({ url: "/workflows/nope/chart" })).json()).toMatchObject({
      code: "JR2_ERR_WORKFLOW_NOT_FOUND",
    });
    await app.close();
  });
});
