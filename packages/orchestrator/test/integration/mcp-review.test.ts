/**
 * Issue 29's done-when on the real stack: an Agent whose MCP servers are the npm package
 * `@modelcontextprotocol/server-everything` (stdio, in the run's sandbox) and a Streamable HTTP
 * server of our own on 127.0.0.1 (the SDK's server, reordering `tools/list` on every listing)
 * completes `review` on model-sim with their tools (`worker:4` calls four of its MCP tools, then picks). The Turn's transcript carries the snapshot and the tools as sent; the
 * header's secret, handed to the Harness's environment only, is in no feed event, transcript,
 * store file or `jr2 transcript` output. Needs the built binaries.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { TranscriptEntry, TurnList, TurnTranscript } from "@jr2/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, startStack } from "../../../conformance/src/index.js";
import { type McpHttpFixture, startMcpHttpServer } from "../../../harness/test/fixtures/mcp-http-server.js";
import { orchestratorHttp } from "./stack-http.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("./mcp-workflows/", import.meta.url));
const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SECRET = "docs-4b1e8f27c90a5d36e1f2";

const entry = (baseUrl: string, id: string) => ({ baseUrl, id, contextWindow: 32768, maxTokens: 1024 });

describe.skipIf(missing.length > 0)(
  "an Agent with MCP servers completes review on model-sim (issue 29)",
  () => {
    let stack: Stack;
    let docs: McpHttpFixture;
    let dataDir: string;
    const { http, events } = orchestratorHttp(() => stack);

    beforeAll(async () => {
      docs = await startMcpHttpServer({ token: SECRET });
      dataDir = mkdtempSync(join(tmpdir(), "jr2-mcp-review-"));
      stack = await startStack("process", {
        repoRoot,
        workflowsDir,
        orchestratorEnv: { JR2_DATA_DIR: dataDir, JR2_TEST_MCP_URL: docs.url },
        harnessEnv: { DOCS_MCP_TOKEN: `Bearer ${SECRET}`, JR2_MCP_SECRETS: "DOCS_MCP_TOKEN" },
        models: (base) => ({ coder: entry(base, "worker:1"), reviewer: entry(base, "worker:4") }),
      });
    }, 120_000);
    afterAll(async () => {
      await stack?.close();
      await docs?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("the reviewer calls its MCP tools, the run ends `done`, the snapshot is on the transcript, the secret nowhere", async () => {
      const started = await http("/workflows/review-mcp/runs", {
        method: "POST",
        body: JSON.stringify({ input: {} }),
      });
      expect(started.status).toBe(201);
      const runId = started.body?.runId as string;
      const deadline = Date.now() + 90_000;
      while ((await http(`/runs/${runId}`)).body?.status === "running") {
        if (Date.now() > deadline) throw new Error("the run did not end");
        await sleep(100);
      }
      await sleep(1500); // the last Turn's transcript follows its pick
      const run = (await http(`/runs/${runId}`)).body;
      expect(run?.value, JSON.stringify((await events(runId)).filter((e) => e.type === "fault"))).toBe(
        "done",
      );

      const list = (await http(`/runs/${runId}/turns`)).body as TurnList;
      const review = list.turns.find((t) => t.state === "review")!;
      const transcript = (await http(`/runs/${runId}/turns/${review.turnId}`)).body as TurnTranscript;
      const entries = transcript.entries.map((r) => r.entry);
      const snapshot = entries.find(
        (e): e is Extract<TranscriptEntry, { kind: "mcp-snapshot" }> => e.kind === "mcp-snapshot",
      );
      expect(snapshot?.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(snapshot?.tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(["mcp__docs__lookup", "mcp__sample__echo"]),
      );
      expect(snapshot?.down).toEqual([]);
      const toolNames = (
        JSON.parse(transcript.prefix!.toolsJson) as Array<{ function: { name: string } }>
      ).map((t) => t.function.name);
      expect(toolNames.slice(0, 3)).toEqual([
        "mcp__docs__count_words",
        "mcp__docs__lookup",
        "mcp__docs__secret_echo",
      ]);
      expect(toolNames.slice(-2)).toEqual(["approve", "request_changes"]);
      const results = entries.filter(
        (e): e is Extract<TranscriptEntry, { kind: "message" }> => e.kind === "message" && e.role === "tool",
      );
      const byTool = (name: string) => results.filter((m) => m.toolName === name).map((m) => m.text);
      expect(byTool("mcp__docs__lookup")[0]).toContain("a term of the glossary");
      expect(byTool("mcp__docs__secret_echo")[0]).toContain("[redacted]");
      expect(byTool("mcp__sample__echo")[0]).toMatch(/Echo/i);
      expect(docs.calls).toEqual(expect.arrayContaining(["count.words", "lookup", "secret_echo"]));

      // The secret: not in the feed, the transcripts, the store's files or the CLI's printout.
      const feed = JSON.stringify(await events(runId));
      const transcripts = JSON.stringify(
        await Promise.all(list.turns.map(async (t) => (await http(`/runs/${runId}/turns/${t.turnId}`)).body)),
      );
      expect(feed).not.toContain(SECRET);
      expect(transcripts).not.toContain(SECRET);
      for (const file of filesUnder(dataDir)) expect(readFileSync(file).includes(SECRET), file).toBe(false);
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [cli, "transcript", runId, "--agent", "reviewer"],
        {
          env: { ...process.env, JR2_URL: stack.orchestratorUrl, JR2_INSTANCE_TOKEN: stack.instanceToken },
        },
      );
      expect(stdout).toContain("MCP tools frozen for this conversation");
      expect(stdout).not.toContain(SECRET);
    }, 150_000);
  },
);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}
