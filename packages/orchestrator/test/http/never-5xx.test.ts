import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agentUrl, buildTestApp, INSTANCE_TOKEN, startFlow } from "./fixture.js";

/**
 * Whatever a caller sends — any route shape, any body bytes, any token — the answer is a coded
 * 4xx or a success, never a 5xx, and the process keeps serving (§4, issue 2 "Done when").
 */
describe("no request answers 5xx", () => {
  it("holds for random paths, methods, bodies and tokens against a live run", async () => {
    const app = await buildTestApp({ bodyLimit: 4096 });
    const { runId, iid } = await startFlow(app);
    const paths = fc.oneof(
      fc.constantFrom(
        agentUrl(iid, "surface"),
        agentUrl(iid, "picks"),
        `/runs/${runId}`,
        `/runs/${runId}/gates/review_gate/events`,
        `/runs/${runId}/cancel`,
        "/workflows/flow/runs",
        "/workflows/flow/menu",
        "/runs?status=bogus",
      ),
      fc.string().map((s) => `/agents/${encodeURIComponent(s)}/picks`),
      fc.webPath().map((p) => `/${p.replace(/^\/+/, "")}`),
    );
    const bodies = fc.oneof(
      fc.json(),
      fc.string(),
      fc
        .record({ name: fc.string(), arguments: fc.anything(), toolCallId: fc.string() })
        .map((b) => JSON.stringify(b)),
      fc.record({ type: fc.string() }, { requiredKeys: [] }).map((b) => JSON.stringify(b)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "PUT", "DELETE") as fc.Arbitrary<"GET" | "POST" | "PUT" | "DELETE">,
        paths,
        bodies,
        fc.constantFrom(INSTANCE_TOKEN, "wrong", ""),
        fc.constantFrom("application/json", "text/plain", "application/octet-stream"),
        async (method, url, payload, token, contentType) => {
          const res = await app.inject({
            method,
            url,
            headers: { authorization: `Bearer ${token}`, "content-type": contentType },
            ...(method === "GET" ? {} : { payload }),
          });
          expect(res.statusCode, `${method} ${url} ${payload}`).toBeLessThan(500);
          if (res.statusCode >= 400)
            expect(res.json()).toMatchObject({ code: expect.stringMatching(/^JR2_ERR_/) });
        },
      ),
      { numRuns: 300 },
    );
    await app.close();
  });
});
