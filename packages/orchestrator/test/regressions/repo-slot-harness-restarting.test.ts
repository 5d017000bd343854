/**
 * Regression (issue 28's scale rule, found by `pnpm bench:workspace-soak`): with the Harness
 * SIGKILLed and restarted every ~3 s, 12 of 16 `review-repo` runs ended `failed` — each had
 * asked the Harness to attach its Repo Slot (or to push at merge) while the Harness was down, and
 * the one `fetch` threw "fetch failed", which the workspace took as its error. Root cause: the
 * Orchestrator's Repo Slot client sent each route once, though every route is safe to ask again
 * (attach and push are idempotent per slot). Fixed: a refused or reset connection, or a 503, is
 * asked again with backoff for a bounded window (repo-slot-client.ts); a coded refusal is not.
 */
import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../../conformance/src/index.js";
import { createRepoSlotClient } from "../../src/turns/repo-slot-client.js";

const HANDLE = { path: "/work/r/w/app", branch: "jr2/w/r", base: "a".repeat(40), commit: "a".repeat(40) };
const ATTACH = { runId: "r", workflow: "w", workspace: "w", slot: "app", url: "/repos/app" };
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A Harness stand-in answering every POST with `status` and `body`, on `port`. */
function harnessOn(port: number, status: number, body: unknown): Promise<{ asked: () => number }> {
  let asked = 0;
  const server = createServer((req, res) => {
    asked++;
    req.resume();
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  server.on("error", () => {});
  servers.push(server);
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve({ asked: () => asked })));
}

describe("the Orchestrator's Repo Slot client while the Harness restarts", () => {
  it("attaches once the Harness is back, instead of failing the run on the refused connection", async () => {
    const port = await freePort();
    const client = createRepoSlotClient({ token: "t" });
    // Nothing listens yet (the Harness was just killed); it is back 1.2 s later.
    const attached = client.attach(`http://127.0.0.1:${port}`, ATTACH);
    await new Promise((r) => setTimeout(r, 1200));
    await harnessOn(port, 200, HANDLE);
    await expect(attached).resolves.toEqual(HANDLE);
  });

  it("still fails once the window is over, with the transport's error", async () => {
    const port = await freePort();
    const client = createRepoSlotClient({ token: "t", downWindowMs: 600 });
    await expect(client.attach(`http://127.0.0.1:${port}`, ATTACH)).rejects.toThrow(/fetch failed/);
  });

  it("does not ask again after a coded refusal (the Harness answered)", async () => {
    const port = await freePort();
    const harness = await harnessOn(port, 400, {
      error: "refused",
      code: "JR2_ERR_WORKSPACE_URL_REFUSED",
      url: "/repos/app",
      rule: "repo-roots",
      fix: "list its root in JR2_REPO_ROOTS",
    });
    const client = createRepoSlotClient({ token: "t" });
    await expect(client.attach(`http://127.0.0.1:${port}`, ATTACH)).rejects.toMatchObject({
      code: "JR2_ERR_WORKSPACE_URL_REFUSED",
    });
    expect(harness.asked()).toBe(1);
  });
});
