/**
 * Issue 11 done-when "Secrets", on the real stack: a Working-tool call
 * `env; cat /proc/self/environ` (scripted on an upstream that is not model-sim) leaves no
 * secret value — the instance token, the Harness bearer, the sandbox key and token, the model
 * entry's API key — in the next model request, the Turn's stored transcript, either service's
 * log, or the OTLP export of both services (with content capture on, the worst case).
 * Needs the built binaries (`pnpm build`).
 * @see ADR-0158, ADR-0159, ADR-0257, ADR-0420
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startOtlpReceiver } from "@jr2/telemetry/testing";
import type { TurnList, TurnTranscript } from "@jr2/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, startStack } from "../../../conformance/src/index.js";
import {
  answer,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../../harness/test/fixtures/scripted-upstream.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("./secrets-workflows/", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const API_KEY = "sk-secrets-e2e-model-key-0123456789abcdef";
const COMMAND = "env; cat /proc/self/environ";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(missing.length > 0)(
  "a Working-tool call that prints the environment (issue 11 secrets)",
  () => {
    let stack: Stack;
    let upstream: ScriptedUpstream;
    let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
    let dataDir: string;

    async function get<T>(path: string): Promise<T> {
      const res = await fetch(`${stack.orchestratorUrl}${path}`, {
        headers: { authorization: `Bearer ${stack.instanceToken}` },
        signal: AbortSignal.timeout(10_000),
      });
      expect(res.status, path).toBe(200);
      return (await res.json()) as T;
    }

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), "jr2-secrets-"));
      upstream = await startScriptedUpstream();
      receiver = await startOtlpReceiver();
      const otel = {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: "200",
        JR2_OTEL_CAPTURE_CONTENT: "true",
      };
      stack = await startStack("process", {
        repoRoot,
        workflowsDir,
        orchestratorEnv: { ...otel, JR2_DATA_DIR: dataDir },
        harnessEnv: otel,
        models: () => ({
          m: {
            baseUrl: upstream.baseUrl,
            id: "tiny",
            apiKey: API_KEY,
            contextWindow: 32768,
            maxTokens: 1024,
          },
        }),
      });
    }, 120_000);
    afterAll(async () => {
      await stack?.close();
      await upstream?.close();
      await receiver?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("leaves no secret in the next model request, the transcript, either log or the OTLP export", async () => {
      upstream.script([
        { sse: answer({ toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: COMMAND }) }] }) },
        {
          sse: answer({ toolCalls: [{ name: "finish", arguments: JSON.stringify({ summary: "seen it" }) }] }),
        },
        { sse: answer({ content: "Done." }) },
      ]);
      const start = await fetch(`${stack.orchestratorUrl}/workflows/snoop/runs`, {
        method: "POST",
        headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
        body: JSON.stringify({}),
      });
      expect(start.status).toBe(201);
      const { runId } = (await start.json()) as { runId: string };
      const deadline = Date.now() + 60_000;
      while ((await get<{ status: string }>(`/runs/${runId}`)).status === "running") {
        if (Date.now() > deadline) throw new Error(`run ${runId} did not end:\n${stack.orchestratorLog()}`);
        await sleep(100);
      }
      const detail = await get<{ outcome?: string; faults?: unknown }>(`/runs/${runId}`);
      expect(detail.outcome, JSON.stringify(detail.faults)).toBe("succeeded");
      await sleep(1_500); // the last transcript entries and the span batches (200 ms) arrive

      // bash ran and printed an environment: the test would prove nothing if it had not.
      const next = upstream.bodies[1] ?? "";
      expect(next).toContain("PATH=");
      const { turns } = await get<TurnList>(`/runs/${runId}/turns`);
      expect(turns).toHaveLength(1);
      const transcript = await get<TurnTranscript>(`/runs/${runId}/turns/${turns[0]!.turnId}`);
      const result = transcript.entries.find(
        (r) => r.entry.kind === "message" && r.entry.part === "tool-result",
      );
      expect(result?.entry.kind === "message" && result.entry.text).toContain("PATH=");
      expect(receiver.spans.length).toBeGreaterThan(0);

      const secrets = [...stack.secretValues, API_KEY];
      const seen = {
        "the next model request": next,
        "the stored transcript": JSON.stringify(transcript),
        "the Orchestrator's log": stack.orchestratorLog(),
        "the Harness's log": stack.harnessLog(),
        "the OTLP export": JSON.stringify(receiver.spans),
      };
      for (const [where, text] of Object.entries(seen))
        for (const secret of secrets) expect(text.includes(secret), `${where} holds a secret`).toBe(false);
    });
  },
);
