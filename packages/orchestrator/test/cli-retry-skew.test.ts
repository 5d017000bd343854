/**
 * Issue 22 rule "Skew" for `jr2 retry`: against an Orchestrator from before ADR-0272 (whose
 * retry body is strict `{}`), the CLI sends `{}` unless `--yes` or `--force` asks for more; a
 * Machine fault's plan (409 `JR2_ERR_RUN_RETRY_UNCONFIRMED`) prints as a dry run, exit 0.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { resumeRetryCommands } from "../src/cli/resume-retry-commands.js";

let server: Server | undefined;
afterEach(() => {
  server?.close();
  vi.restoreAllMocks();
});

/** An Orchestrator answering every retry with `status` and `body`; records the bodies sent. */
async function orchestrator(status: number, body: unknown): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const listening = createServer((req, res) => {
    let text = "";
    req.on("data", (c) => {
      text += String(c);
    });
    req.on("end", () => {
      bodies.push(text);
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    });
  });
  server = listening;
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`, bodies };
}

async function retry(args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  const code = await resumeRetryCommands.retry!.run(args);
  vi.restoreAllMocks();
  return { code, out };
}

const answer = {
  runId: "r1",
  status: "running",
  child: "a#w",
  turnId: "t2",
  fromVersion: 3,
  value: "a",
  seq: 7,
};

describe("jr2 retry across versions (issue 22 skew rule)", () => {
  it("sends {} by default (what an older Orchestrator takes), confirm/force only when asked", async () => {
    const { url, bodies } = await orchestrator(200, answer);
    const token = "t".repeat(32);
    expect((await retry(["r1", "--url", url, "--token", token])).out).toContain(
      "run r1 retried a#w from version 3",
    );
    await retry(["r1", "--yes", "--force", "--url", url, "--token", token]);
    expect(bodies.map((b) => JSON.parse(b))).toEqual([{}, { confirm: true, force: true }]);
  });

  it("without --follow, says how to follow the run it revived (as `jr2 fork` does)", async () => {
    const { url } = await orchestrator(200, answer);
    const { code, out } = await retry(["r1", "--url", url, "--token", "t".repeat(32)]);
    expect(code).toBe(0);
    expect(out).toBe(
      "run r1 retried a#w from version 3 as Turn t2 (a new conversation); running\n  follow it: jr2 follow r1\n",
    );
  });

  it("prints a Machine fault's plan as a dry run, exit 0", async () => {
    const machineFault = {
      reason: "unknown Turn input key `system`",
      from: "input",
      newConversations: ["*"],
      sourceDigest: { faulted: "aaaaaaaaaaaaaaaa", served: "bbbbbbbbbbbbbbbb" },
    };
    const { url } = await orchestrator(409, {
      error: "run `r1` was faulted by its Machine …",
      code: "JR2_ERR_RUN_RETRY_UNCONFIRMED",
      machineFault,
    });
    const { code, out } = await retry(["r1", "--url", url, "--token", "t".repeat(32)]);
    expect(code).toBe(0);
    expect(out).toContain("run r1 was faulted by its Machine: unknown Turn input key `system`");
    expect(out).toContain("workflow source: aaaaaaaaaaaa when it faulted → bbbbbbbbbbbb served now");
    expect(out).toContain("would start again from its stored input");
    expect(out).toContain("dry run, nothing changed: retry with `jr2 retry r1 --yes`");
    expect(out).not.toContain("follow it");
  });
});
