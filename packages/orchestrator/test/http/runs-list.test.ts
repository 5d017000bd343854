/** `GET /runs` (ADR-0062): the unpaged array as before, pages with `limit`/`cursor`, filters. */
import { RunPage, RunSummary } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { buildTestApp, call } from "./fixture.js";

describe("GET /runs", () => {
  it("answers the array without paging, a page with limit, and follows nextCursor to the end", async () => {
    const app = await buildTestApp();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await call(app, "POST", "/workflows/flow/runs", { input: { task: "t" } })).body.runId);
    const all = await call(app, "GET", "/runs");
    expect(all.status).toBe(200);
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.body.map((r: RunSummary) => RunSummary.parse(r).runId).sort()).toEqual([...ids].sort());

    const first = await call(app, "GET", "/runs?limit=2&workflow=flow&status=running");
    const page = RunPage.parse(first.body);
    expect(page.runs).toHaveLength(2);
    expect(page.nextCursor).toEqual(expect.any(String));
    // Each item carries its state and usage: a list (the console's) needs no call per run.
    for (const r of page.runs) {
      expect(r.value).toBeDefined();
      expect(r.usage).toMatchObject({ promptTokens: expect.any(Number) });
    }
    const second = RunPage.parse(
      (await call(app, "GET", `/runs?limit=2&workflow=flow&status=running&cursor=${page.nextCursor}`)).body,
    );
    expect(second).toMatchObject({ nextCursor: null });
    expect([...page.runs, ...second.runs].map((r) => r.runId).sort()).toEqual([...ids].sort());

    expect((await call(app, "GET", "/runs?limit=5&workflow=other")).body).toEqual({
      runs: [],
      nextCursor: null,
    });
    expect((await call(app, "GET", "/runs?outcome=succeeded")).body).toEqual([]);
    await app.close();
  });

  it("refuses a cursor not from a page and an unknown outcome", async () => {
    const app = await buildTestApp();
    const bad = await call(app, "GET", "/runs?cursor=not-a-cursor");
    expect(bad).toMatchObject({ status: 400, body: { code: "JR2_ERR_REQUEST_INVALID" } });
    expect(bad.body.error).toContain("not-a-cursor");
    expect((await call(app, "GET", "/runs?outcome=won")).status).toBe(400);
    expect((await call(app, "GET", "/runs?limit=0")).status).toBe(400);
    await app.close();
  });
});
