/**
 * The Streamable HTTP path's per-message bound (ADR-0232): a JSON answer or one SSE event over
 * the bound errors the body with McpServerDown (the SDK never holds it), an honest stream of many
 * small events passes whole however long it runs.
 */
import { describe, expect, it } from "vitest";
import { boundedFetch } from "../../src/tools/mcp/bounds/bounded-fetch.js";
import { LineFramer } from "../../src/tools/mcp/bounds/line-framer.js";
import { McpServerDown } from "../../src/tools/mcp/bounds/message-bound.js";

const serve = (body: string, type: string) => async () =>
  new Response(body, { headers: { "content-type": type } });

describe("boundedFetch", () => {
  it("a JSON answer over the bound errors its body and says why once", async () => {
    const said: string[] = [];
    const f = boundedFetch(
      (r) => said.push(r),
      1000,
      serve(JSON.stringify({ x: "A".repeat(5000) }), "application/json"),
    );
    await expect((await f("http://127.0.0.1/mcp")).json()).rejects.toBeInstanceOf(McpServerDown);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("more than 1000 bytes");
  });
  it("an SSE stream of many small events passes whole; one event over the bound does not", async () => {
    const small = "data: {}\n\n".repeat(500);
    const ok = boundedFetch(() => undefined, 1000, serve(small, "text/event-stream"));
    expect(await (await ok("http://127.0.0.1/mcp")).text()).toBe(small);
    const big = boundedFetch(
      () => undefined,
      1000,
      serve(`data: ${"A".repeat(5000)}\n\n`, "text/event-stream"),
    );
    await expect((await big("http://127.0.0.1/mcp")).text()).rejects.toBeInstanceOf(McpServerDown);
  });
});

describe("LineFramer", () => {
  it("splits lines across chunks and drops one over the bound without holding it", () => {
    const lines: string[] = [];
    const over: number[] = [];
    const framer = new LineFramer(
      (l) => lines.push(l),
      (n) => over.push(n),
      10,
    );
    framer.push(Buffer.from('{"a":1}\r\n{"b"'));
    framer.push(Buffer.from(":2}\nxxxxxxxx"));
    framer.push(Buffer.from("xxxxxxxx\nok\n"));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', "ok"]);
    expect(over).toEqual([16]);
  });
});
