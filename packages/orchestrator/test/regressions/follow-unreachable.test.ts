/**
 * Issue 11 item 4 — `jr2 follow <run>` against an Orchestrator that is not there. Root cause:
 * the feed's reconnect loop (meant for an Orchestrator restarting under a follow) also ran
 * when no connection had ever been made: 30 silent attempts a second apart, then the feed
 * "ended" — `jr2 follow` said nothing for 30 s before `cannot reach`. Now a follow that never
 * connected fails at once with the same error as every other command (exit 2).
 * Found by the adversarial pass of issue 11.
 */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { followFeed } from "../../src/cli/client.js";

/** A port on 127.0.0.1 nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("jr2 follow against no Orchestrator", () => {
  it("fails at once naming the URL it could not reach", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const feed = followFeed({ url, token: "t".repeat(32) }, "run-x");
    await expect(feed.next()).rejects.toThrow(`cannot reach the Orchestrator at ${url}`);
  }, 4_000);
});
