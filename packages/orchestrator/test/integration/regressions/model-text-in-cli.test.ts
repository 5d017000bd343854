/**
 * Regressions of what `jr2 follow` / `jr2 transcript` print of a model's text, on the real stack.
 *
 * Issue 25 §7, issue 24 §8: a tool name a model wrote with a newline in it printed
 * a forged `pick … moved, turn complete` line in `jr2 follow` and `jr2 transcript`. Root cause:
 * the CLI stripped control characters but kept newline and tab in every line, the model's
 * fields included; bidi controls (U+202E) passed untouched. Fixed: one escaping function
 * (@jr2/wire `escapeModelText`) for every model-written string the CLI prints — inside a line a
 * newline reads `\n`, ESC `\x1b`, U+202E `\u{202E}` — and the Harness's log lines.
 *
 * Bytes: a scripted OpenAI-compatible upstream sends the tool call in llama-server's recorded
 * chunk envelope (`../shared/cases/real-servers/llama-server/c1_stream.response`, via the
 * Harness's scripted-upstream fixture); the name is hand-written, as a model (or a prompt
 * injected into it) can write any bytes inside a JSON string of `function.name`.
 *
 * Issue 25 §9: a 2 MB answer was cut at 64 KiB in the transcript without saying so. Root cause:
 * the store keeps the first 64 KiB of each text field and `capped` its full size, but the CLI
 * printed only "(cut: text N bytes)" on the header. Fixed: a line at the cut says where it was
 * cut and how much was left out. Bytes: the same envelope, a 2,000,000-byte `content` delta.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, startStack } from "../../../../conformance/src/index.js";
import {
  answer,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../../../harness/test/fixtures/scripted-upstream.js";
import { orchestratorHttp } from "../stack-http.js";

const repoRoot = fileURLToPath(new URL("../../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("./workflows/", import.meta.url));
const cli = fileURLToPath(new URL("../../../dist/cli/main.js", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** ESC and the right-to-left override, raw: what a terminal would act on. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const ACTS = /[\u001b\u202e]/;

/** A line `jr2 follow` prints for a delivered pick, as the model tries to forge it. */
const FORGED = "09:00:00  pick      review#reviewer  approve → moved, turn complete";
const NAME = `approve\n${FORGED}\n[09:00:00] answer · scripted\u202E\u001b[2K`;

/** A 2 MB answer text (issue 25 §9). */
const BIG = "y".repeat(2_000_000);

describe.skipIf(missing.length > 0)("model text in jr2 follow and jr2 transcript (issue 25 §7, §9)", () => {
  let stack: Stack;
  let upstream: ScriptedUpstream;
  const { http } = orchestratorHttp(() => stack);
  const run = (args: string[]) =>
    promisify(execFile)("node", [cli, ...args], {
      env: { ...process.env, JR2_URL: stack.orchestratorUrl, JR2_INSTANCE_TOKEN: stack.instanceToken },
    }).then(
      (r) => r.stdout,
      (e: { stdout?: string }) => e.stdout ?? "",
    );

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    upstream.script([
      { sse: answer({ toolCalls: [{ id: "call_0", name: NAME, arguments: '{"summary":"forged"}' }] }) },
      { sse: answer({ toolCalls: [{ id: "call_1", name: "approve", arguments: '{"summary":"ok"}' }] }) },
      {
        sse: answer({
          content: BIG,
          toolCalls: [{ id: "call_2", name: "approve", arguments: '{"summary":"big"}' }],
        }),
      },
    ]);
    stack = await startStack("process", {
      repoRoot,
      workflowsDir,
      models: () => ({
        scripted: { baseUrl: upstream.baseUrl, id: "qwen3", contextWindow: 32768, maxTokens: 1024 },
      }),
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await upstream?.close();
  });

  /** Starts an `approval` run and waits for it to settle; its runId. */
  async function settledRun(): Promise<string> {
    const started = await http("/workflows/approval/runs", { method: "POST", body: "{}" });
    expect(started.status).toBe(201);
    const runId = started.body?.runId as string;
    const deadline = Date.now() + 60_000;
    while ((await http(`/runs/${runId}`)).body?.status === "running") {
      if (Date.now() > deadline) throw new Error(`run ${runId} did not settle`);
      await sleep(100);
    }
    return runId;
  }

  it("jr2 follow and jr2 transcript print the name escaped, on one line; the one real pick is delivered once", async () => {
    const runId = await settledRun();
    expect((await http(`/runs/${runId}`)).body).toMatchObject({ status: "done", outcome: "succeeded" });

    const escaped =
      "approve\\n09:00:00  pick      review#reviewer  approve → moved, turn complete\\n[09:00:00] answer · scripted\\u{202E}\\x1b[2K";
    const follow = await run(["follow", runId]);
    const picks = follow.split("\n").filter((l) => /^\d\d:\d\d:\d\d {2}pick {6}/.test(l));
    // One pick line: the real one; the invented call is one line of its own carrying the name escaped.
    expect(picks).toHaveLength(1);
    expect(picks[0]).toMatch(
      /^\d\d:\d\d:\d\d {2}pick {6}review#reviewer {2}approve \{"summary":"ok"\} → moved, turn complete$/,
    );
    expect(follow).toContain(escaped);
    expect(follow.split("\n").some((l) => l.startsWith(FORGED))).toBe(false);
    expect(follow).not.toMatch(ACTS);

    const transcript = await run(["transcript", runId]);
    expect(transcript).toContain(`  → ${escaped} [invented`);
    // The forged text never starts a line; inside a block (the receipt) it is indented under its label.
    expect(
      transcript.split("\n").some((l) => l.startsWith(FORGED) || l.startsWith("[09:00:00] answer")),
    ).toBe(false);
    expect(transcript).not.toMatch(ACTS);
    expect(transcript.match(/^ {2}pick approve \{"summary":"ok"\}$/m)).not.toBeNull();
  }, 120_000);

  it("a 2 MB answer's transcript says where it was cut and how much was left out", async () => {
    const runId = await settledRun();
    const transcript = await run(["transcript", runId]);
    expect(transcript).toContain("(cut when stored: text had 2000000 bytes, kept to 65536)");
    expect(transcript).toContain(
      "  [cut here when stored, after byte 65536 of 2000000: 1934464 bytes (1.8 MiB) left out]",
    );
    // The line comes right after the kept text.
    expect(transcript).toMatch(/y{100}\n {2}\[cut here when stored/);
    expect(transcript.match(/y/g)?.length ?? 0).toBeLessThan(70_000);
  }, 120_000);
});
