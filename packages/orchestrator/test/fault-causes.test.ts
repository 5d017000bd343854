/** The pure fault mapping (src/fault-causes.ts, ADR-0035) against hostile and odd inputs. */
import { describe, expect, it } from "vitest";
import { DETAIL_MAX, faultOfRefusal, faultOfSettlement } from "../src/turns/fault-causes.js";

const target = { harnessUrl: "http://h:7401", agent: "writer", model: "writer" };

describe("fault mapping", () => {
  it("a settlement's huge message (a proxy's HTML page) is kept bounded, its start intact", () => {
    const message = `model \`m\` at http://gpu:8000/v1: 502 ${"<p>".repeat(100_000)}`;
    const fault = faultOfSettlement({ type: "provider", message, cause: "unavailable" });
    expect(fault).toMatchObject({ reason: "infra", cause: "unavailable" });
    expect(fault.detail?.startsWith("model `m` at http://gpu:8000/v1: 502")).toBe(true);
    expect(fault.detail!.length).toBeLessThan(DETAIL_MAX + 100);
  });

  it("a cause that is no string, or a settlement with no error, is infra without a cause", () => {
    expect(faultOfSettlement({ type: "provider", message: "x", cause: 42 as never })).toEqual({
      reason: "infra",
      detail: "x",
    });
    expect(faultOfSettlement(undefined)).toEqual({ reason: "infra", detail: "the Submission failed" });
  });

  it.each([
    [undefined, "(no JSON body)"],
    [null, "null"],
    [["a", 1], '["a",1]'],
    ["plain text", '"plain text"'],
  ])("a refusal body %j that is no jr2 error is quoted as %s", (body, quoted) => {
    expect(faultOfRefusal(400, body, target)).toEqual({
      reason: "infra",
      cause: "bad-request",
      detail: `the Harness at http://h:7401 refused the admission (HTTP 400): ${quoted}`,
    });
  });

  it("an unknown-model refusal without its fields still names the model the Turn sent", () => {
    const fault = faultOfRefusal(400, { error: "unknown model", code: "JR2_ERR_MODEL_UNKNOWN" }, target);
    expect(fault).toMatchObject({ reason: "infra", cause: "unknown-model" });
    expect(fault.detail).toContain("has no model `writer` (Agent `writer`). Add `writer`");
  });

  it("a 5xx refusal is infra with no cause (the Harness's own trouble, not the request's)", () => {
    expect(faultOfRefusal(503, { error: "stopping", code: "JR2_ERR_SERVICE_STOPPING" }, target)).toEqual({
      reason: "infra",
      detail:
        "the Harness at http://h:7401 refused the admission (HTTP 503 JR2_ERR_SERVICE_STOPPING): stopping",
    });
  });
});
